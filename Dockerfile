# One image for both halves of Switchboard (docs: README "Install on Kubernetes", docs/kubernetes.md):
#   docker run IMAGE controller [flags]   the controller (what the Helm chart runs)
#   docker run IMAGE proxy [flags]        the data-plane proxy (what the controller provisions per Gateway)
# Any other `switchboard` command works the same way (validate, version, run, …).
#
# Build:  docker build -t ghcr.io/switchboard-dev/switchboard:$(node -p 'require("./package.json").version') .
# The chart's default image.tag is its appVersion, and the controller gives provisioned proxies its
# own version as their tag, so tag the image with package.json's version.
#
# The image runs the production build (scripts/build.ts, `npm run build`): the CLI and its worker
# entries bundled by esbuild into dist/, which starts in less CPU and memory than Node loading the
# ~1,000 TypeScript modules one by one (issue 15; README "Production build"). The build stage needs
# the dev dependencies (esbuild); the image gets dist/ and the production node_modules only (the
# bundle leaves a few packages there that load on first use: gpt-tokenizer, the OTLP exporters).
# Source maps are in dist/: NODE_OPTIONS=--enable-source-maps maps stack traces to src/ (it costs
# memory, so it is not the default). The generated protobuf code is committed.

ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.ts ./scripts/
COPY bin ./bin
COPY src ./src
RUN node scripts/build.ts

FROM gcr.io/distroless/nodejs${NODE_VERSION}-debian12:nonroot
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# package.json for the version (`switchboard version`, the tag provisioned proxies get).
COPY package.json ./
COPY --from=build /app/dist ./dist
# Non-root (uid 65532 in the distroless "nonroot" image); the chart's securityContext can add
# readOnlyRootFilesystem: the process writes nothing to disk.
USER 65532:65532
# Controller 9978 (xDS) / 9093 (health) / 9092 (metrics); proxy 15020 (metrics, readiness) and
# whatever ports its Gateway's listeners name.
EXPOSE 9978 9093 9092 15020
ENV NODE_ENV=production
# distroless/nodejs's entrypoint is `node`: the first argument is the script (dist/switchboard.mjs
# is bin/switchboard.js bundled). With SWITCHBOARD_SEMI_SPACE_MIB=N in the container's environment, it restarts
# controller, proxy and run at once (same pid) with node's --max-semi-space-size=N
# (src/cli/node-flags.js: less memory at large configs, more CPU per request), so no node flag is set here.
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/switchboard.mjs"]
CMD ["--help"]
