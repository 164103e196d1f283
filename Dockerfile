# One image for the three Sightline processes; docker-compose.yml picks the part with `command`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workers ./workers
COPY clickhouse ./clickhouse
COPY postgres ./postgres
COPY scripts ./scripts
# The web application, built once into web/dist (served by the web process).
COPY web ./web
RUN node scripts/build-web.mjs --force
# The server bundled once into dist/server (esbuild comes with vite): production installs no tsx, and
# a start loads JavaScript instead of compiling TypeScript (docs/operations.md, "Restarts").
RUN node scripts/build-server.mjs --force
ENV HOST=0.0.0.0
EXPOSE 8000 3000
CMD ["node", "dist/server/main.js", "api"]
