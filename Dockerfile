# workforce-sync: one image for every role (migrate, scheduler, worker, serve, start).
# Stage 1 installs the production dependencies; stage 2 holds only what runs, as the unprivileged `node` user.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Files stay owned by root and read-only to the service user; only its data directory is writable.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY drizzle ./drizzle
# The CLI bundled once here (bin/load.js): the service user cannot write /app, and would otherwise run the sources
# through tsx's loader in every process.
RUN bin/wfsync.js --help > /dev/null && test -f .build/manifest.json
RUN mkdir -p /app/.wfsync && chown node:node /app/.wfsync
USER node
EXPOSE 8080 9464
# Run as its own executable: its first line gives node its heap limit (bin/wfsync.js says why).
ENTRYPOINT ["bin/wfsync.js"]
CMD ["start"]
