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
ENV HOST=0.0.0.0
EXPOSE 8000 3000
CMD ["npx", "tsx", "src/main.ts", "api"]
