#!/usr/bin/env bash
# Makes sure node-gyp can build the host-copy addon (packages/runtime/native): a C compiler, make and
# python3, and Node's headers. Installs Debian's build-essential and python3 where they are missing
# (needs apt-get and root). Exits 1, saying what to install by hand, where it cannot. Safe to run again.
#   SYNCOPATE_NODE_HEADERS  where to put Node-API's headers when Node's own are missing (quickstart.sh
#                           names it and hands it to node-gyp as its nodedir)
#   SYNCOPATE_APT_UPDATED   a file that says apt-get update already ran (quickstart.sh names it)
set -euo pipefail

node_version=$(node -p process.versions.node)
headers=${SYNCOPATE_NODE_HEADERS:-${XDG_CACHE_HOME:-$HOME/.cache}/syncopate/node-headers-v$node_version}
# The addon includes node_api.h alone; node-api-headers is the Node.js project's package of those headers.
NODE_API_HEADERS=node-api-headers@1.9.0

missing=()
# gyp's Makefile compiles with cc and links with g++; node-gyp runs gyp with python3.
if ! command -v cc >/dev/null || ! command -v g++ >/dev/null || ! command -v make >/dev/null; then missing+=(build-essential); fi
if ! command -v python3 >/dev/null; then missing+=(python3); fi

if ((${#missing[@]})); then
  if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
    echo "setup-toolchain: the host-copy addon needs a C compiler (cc, g++), make and python3, and cannot install them (needs Debian and root)." >&2
    echo "  Install them by hand (on Debian: apt-get install build-essential python3); without them peer copies copy on the JS thread." >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -s "${SYNCOPATE_APT_UPDATED:-}" ]; then
    apt-get update -qq
    if [ -n "${SYNCOPATE_APT_UPDATED:-}" ]; then echo updated >"$SYNCOPATE_APT_UPDATED"; fi
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "setup-toolchain: installed ${missing[*]} for the host-copy addon"
fi

# Node's headers: node-gyp takes them from beside node (an official tarball's include/node) or from its
# cache, and otherwise downloads them from nodejs.org, which a machine that reaches only the npm
# registry and Debian cannot (a copied node binary, as in docs/contributing.md's check).
prefix=$(node -p 'require("node:path").resolve(process.execPath, "../..")')
if [ -f "$prefix/include/node/node_api.h" ] || [ -f "${XDG_CACHE_HOME:-$HOME/.cache}/node-gyp/$node_version/include/node/common.gypi" ]; then
  exit 0
fi
if [ -f "$headers/include/node/common.gypi" ]; then
  echo "setup-toolchain: Node-API headers for the host-copy addon in $headers"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! tarball=$(cd "$tmp" && npm pack "$NODE_API_HEADERS" --loglevel=error 2>"$tmp/npm.log"); then
  echo "setup-toolchain: Node's headers are not beside node, and $NODE_API_HEADERS could not be fetched from npm: $(grep -v '^npm error \(code\|errno\|A complete log\)' "$tmp/npm.log" | head -1)" >&2
  echo "  Install Node from its official tarball (it has include/node), or let node-gyp reach nodejs.org." >&2
  exit 1
fi
mkdir -p "$tmp/nodedir/include/node"
tar xzf "$tmp/$tarball" -C "$tmp/nodedir/include/node" --strip-components=2 package/include
# node-gyp reads its build settings from the nodedir's common.gypi: Node's own for Linux, in short.
cat >"$tmp/nodedir/include/node/common.gypi" <<'EOF'
{
  'target_defaults': {
    'default_configuration': 'Release',
    'configurations': {
      'Debug': { 'cflags': ['-g', '-O0'] },
      'Release': { 'cflags': ['-O3', '-fno-omit-frame-pointer'] },
    },
    'cflags': ['-fPIC', '-pthread', '-Wall', '-Wextra', '-Wno-unused-parameter'],
    'ldflags': ['-pthread', '-rdynamic'],
  },
}
EOF
mkdir -p "$(dirname "$headers")"
rm -rf "$headers"
mv "$tmp/nodedir" "$headers"
echo "setup-toolchain: Node's headers are not beside node; fetched $NODE_API_HEADERS from npm into $headers for the host-copy addon"
