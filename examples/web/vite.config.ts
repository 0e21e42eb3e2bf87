import { defineConfig } from 'vite';

// React's automatic JSX runtime through Vite's own esbuild, so the app needs no framework plugin.
export default defineConfig({
  esbuild: { jsx: 'automatic' },
  server: { port: 5173, strictPort: true },
  build: { outDir: 'dist', emptyOutDir: true },
});
