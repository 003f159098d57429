# Sourced by quickstart.sh and test.sh: where setup-toolchain.sh puts Node-API's headers when Node's
# own are not beside node, and, once they are there, npm_config_nodedir, which node-gyp reads for every
# addon build: the workspace's, and npm's install of the packed tarballs in check-packages.mjs (a fresh
# machine's node-gyp cannot fetch headers from nodejs.org). build.mjs's --nodedir (headers beside node) wins.
export SYNCOPATE_NODE_HEADERS="${SYNCOPATE_NODE_HEADERS:-${XDG_CACHE_HOME:-$HOME/.cache}/syncopate/node-headers-v$(node -p process.versions.node)}"
if [ -f "$SYNCOPATE_NODE_HEADERS/include/node/common.gypi" ]; then export npm_config_nodedir="$SYNCOPATE_NODE_HEADERS"; fi
