# The server image: built once, run by every replica (see compose.yaml).
#   docker build -t zulip-es .
#   docker run -e DATABASE_URL=... -e NATS_URL=... -e DATA_KEY_SECRET=... -p 9991:9991 zulip-es

# Build stage: every dependency (the compiler is a dev dependency), then the compiled JavaScript.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci runs the postinstall script: it applies patches/ to the installed packages and rebuilds tap's plugins
# when tap is installed.
COPY scripts/tap-plugins.mjs ./scripts/
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY projections ./projections
COPY migrations ./migrations
COPY scripts ./scripts
RUN npm run build

# Run stage: production dependencies and the compiled output only, as an unprivileged user.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=9991 \
    DATA_DIR=/var/lib/zulip-es
WORKDIR /app
# Pygments highlights code blocks (src/markdown/pygments-helper.py), as on the real server.
RUN apt-get update && apt-get install -y --no-install-recommends python3-pygments && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY scripts/tap-plugins.mjs ./scripts/
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
RUN mkdir -p /var/lib/zulip-es && chown node:node /var/lib/zulip-es
USER node
VOLUME ["/var/lib/zulip-es"]
EXPOSE 9991
# SIGTERM: the server stops accepting, answers every blocked long-poll, finishes in-flight requests, exits.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 9991) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1's only process: no npm or shell stays in between to swallow signals or memory.
CMD ["node", "--enable-source-maps", "dist/src/server.js"]
