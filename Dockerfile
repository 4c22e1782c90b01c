# workforce-sync: one image for every role (worker, scheduler, serve, migrate, start).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY drizzle ./drizzle
COPY tsconfig.json ./
USER node
ENTRYPOINT ["node", "bin/wfsync.js"]
CMD ["start"]
