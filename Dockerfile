# syntax=docker/dockerfile:1
#
# One image for every Monsoon role. The entry point is `monsoon node`, so the arguments name the
# role and its flags (or set them as MONSOON_<FLAG> variables, or in a --config file):
#
#   docker build -t monsoon:0.1.0 .
#   docker run --rm -v monsoon-s0:/var/lib/monsoon -v "$PWD/genesis.json:/etc/monsoon/genesis.json:ro" \
#     -p 50051:50051 monsoon:0.1.0 storage --genesis /etc/monsoon/genesis.json --shards 0-7 \
#     --listen 0.0.0.0:50051 --metrics 0.0.0.0:9100
#
# The storage node's data (write-ahead log, checkpoints) is /var/lib/monsoon (MONSOON_DATA_DIR):
# mount a volume there. The process runs as uid 1000 (`node`), not root.
# Deployments: deploy/README.md (Kubernetes, VMs). Checked by `npm test -- test/deploy` (hadolint).

ARG NODE_VERSION=20.20.2
ARG RUST_VERSION=1.95

# The revm addon (native/evm, issue 16) is Rust: built in a stage of its own with the toolchain
# the repository is built with here, on the same Debian as the Node stages (same glibc), crates
# pinned by Cargo.lock. Only the library leaves this stage.
FROM rust:${RUST_VERSION}-bookworm AS evm
WORKDIR /evm
COPY native/evm/Cargo.toml native/evm/Cargo.lock native/evm/build.rs ./
COPY native/evm/src ./src
RUN cargo build --release --locked \
  && cp target/release/libmonsoon_evm.so /evm/evm.node

FROM node:${NODE_VERSION}-bookworm AS build
# node-gyp needs Node's headers. The official image installs Node under /usr/local, not /usr as
# Debian's nodejs, so the addons are built here against this directory, and any dependency built from source finds the same headers through
# npm_config_nodedir: nothing is downloaded at build time.
ARG NODE_HEADERS_DIR=/usr/local
ENV npm_config_nodedir=${NODE_HEADERS_DIR}
WORKDIR /app
COPY . .
COPY --from=evm /evm/evm.node native/evm/build/evm.node
# `npm install`, not `npm ci`: the lockfile lists only the optional binaries (swc, Biome) of the
# platform it was written on (see the root README).
RUN npm install --no-audit --no-fund \
  && npx --no-install node-gyp rebuild --directory=native/keccak --nodedir="${NODE_HEADERS_DIR}" --loglevel=warn \
  && npx --no-install node-gyp rebuild --directory=native/rdma --nodedir="${NODE_HEADERS_DIR}" --loglevel=warn \
  && npm run build:ts \
  && MONSOON_KECCAK=native node --input-type=module -e "await import('@monsoon/keccak')" \
  && node --input-type=module -e "import { evmUnavailable } from '@monsoon/evm'; const e = evmUnavailable(); if (e) throw new Error(e)" \
  && npm prune --omit=dev --no-audit --no-fund \
  && rm -rf native/keccak/build/Release/obj.target native/rdma/build/Release/obj.target

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
  MONSOON_DATA_DIR=/var/lib/monsoon \
  MONSOON_KECCAK=native
WORKDIR /app
# The application stays owned by root: the role process can read it, not change it.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/native ./native
COPY --from=build /app/packages ./packages
COPY --from=build /app/deploy/topologies ./deploy/topologies
RUN mkdir -p /var/lib/monsoon /etc/monsoon \
  && chown 1000:1000 /var/lib/monsoon \
  && node --input-type=module -e "await import('@monsoon/keccak')"
# 50051 storage gRPC, 60000 miner gRPC, 8545 client JSON-RPC, 50061 client gRPC, 9100 metrics and probes.
EXPOSE 50051 60000 8545 50061 9100
# `node` (uid 1000) of the official image, numeric so Kubernetes can check runAsNonRoot.
USER 1000:1000
ENTRYPOINT ["node", "packages/cli/dist/cli/monsoon.js", "node"]
CMD ["--help"]
