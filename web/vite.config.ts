import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The browser application (README, "Web application"): built into web/dist, which the web process
// serves (src/web/static.ts). `npm run dev:web` proxies the server routes to a running `npm start`.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 800 },
  server: {
    proxy: Object.fromEntries(['/api', '/app-api', '/cli'].map((p) => [p, 'http://localhost:3000'])),
  },
});
