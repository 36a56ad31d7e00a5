#!/usr/bin/env bash
# The peer matrix: the install, Tables, Blob, Queue and retry tests run again with the four
# SDK peers at the oldest release of each declared range (package.json peerDependencies), then
# at the newest release inside it. `npm test` runs on the repo's devDependencies, which are
# neither. The peer ranges claim only what this tests.
#
#   scripts/peer-matrix.sh [oldest|newest]...     (both when none is named)
#
# Each cell is an install of its own (PEER_MATRIX_DIR/<cell>, default under $TMPDIR), made once
# and reused while it holds the versions asked for: idempotent, and offline after the first run
# (with no registry, "newest" keeps the versions it installed last time, and says so).
# vitest.peers.config.ts resolves the peers from the cell; test/peers/loadedVersions.test.ts
# fails the cell unless the tests loaded the cell's copies at the cell's versions.
set -euo pipefail
cd "$(dirname "$0")/.."

PEERS=(@azure/data-tables @azure/storage-blob @azure/storage-queue @azure/core-rest-pipeline)
MATRIX_DIR="${PEER_MATRIX_DIR:-${TMPDIR:-/tmp}/azure-storage-resilience-peers}"
# The Node the repo's `npm ci` installed (package.json devDependency "node"), as `npm test` uses.
NODE="${PEER_MATRIX_NODE:-node_modules/.bin/node}"

# The tests each cell runs, and why these: the version check; the install unit tests (finding
# the core pipeline and wrapping the methods on real client classes of each SDK, on a mock
# transport); retry (Tables: 503s, resets, Retry-After, abort, the SDK's own retry removed);
# blob and queue (every kind of Blob and Queue client installed, retried through busy windows
# and resets, no nested retry); retryInfo (what each SDK hands the caller: Tables' onResponse,
# Blob and Queue results' _response, the errors); batchChangeset (transactions, which Tables 13.0
# sent through a pipeline of its own); blobDownloadResume (a cut Get Blob body resumed under the
# Blob SDK's download stream); ambiguousWrites (read-backs built with the package's own
# core-rest-pipeline and sent through the SDK's, two copies of it when the package's is older).
FILES=(
  test/peers
  test/unit/install
  test/integration/retry.test.ts
  test/integration/blob.test.ts
  test/integration/queue.test.ts
  test/integration/retryInfo.test.ts
  test/integration/batchChangeset.test.ts
  test/integration/blobDownloadResume.test.ts
  test/integration/ambiguousWrites.test.ts
)

# The floor of each peer's declared range: ranges are "^X.Y.Z" with X.Y.Z released, so the
# floor is the oldest release the range admits.
range_of() {
  "$NODE" -e 'const range = require("./package.json").peerDependencies[process.argv[1]];
    if (!/^\^\d+\.\d+\.\d+$/.test(range ?? "")) { console.error(`peer range of ${process.argv[1]} is not ^X.Y.Z: ${range}`); process.exit(1); }
    console.log(range);' "$1"
}

# The newest release inside the range, from the registry (prereleases excluded).
newest_in_range() {
  npm view "$1@$2" version --json --fetch-retries=0 --fetch-timeout=15000 2>/dev/null |
    "$NODE" -e 'let text = ""; process.stdin.on("data", (d) => (text += d)).on("end", () => {
      const found = [].concat(JSON.parse(text));
      const key = (v) => v.split(".").map(Number);
      found.sort((a, b) => { const [x, y] = [key(a), key(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
      if (found.length === 0) process.exit(1);
      console.log(found[found.length - 1]);
    });'
}

installed_version() {
  local manifest="$1/node_modules/$2/package.json"
  [ -f "$manifest" ] && "$NODE" -p "require('$manifest').version" || true
}

# Installs the cell ($1) with the given name@version list, unless it already holds exactly those.
install_cell() {
  local cell_dir="$MATRIX_DIR/$1"; shift
  local wanted=("$@") missing=0 spec
  for spec in "${wanted[@]}"; do
    [ "$(installed_version "$cell_dir" "${spec%@*}")" = "${spec##*@}" ] || missing=1
  done
  if [ "$missing" -eq 0 ]; then return 0; fi
  mkdir -p "$cell_dir"
  "$NODE" -e 'const deps = {}; for (const s of process.argv.slice(1)) { const at = s.lastIndexOf("@"); deps[s.slice(0, at)] = s.slice(at + 1); }
    console.log(JSON.stringify({ private: true, description: "azure-storage-resilience peer matrix cell", dependencies: deps }, null, 2));' "${wanted[@]}" >"$cell_dir/package.json"
  (cd "$cell_dir" && npm install --no-audit --no-fund --loglevel=error)
}

run_cell() {
  local cell="$1" specs=() name range version
  for name in "${PEERS[@]}"; do
    range="$(range_of "$name")"
    if [ "$cell" = oldest ]; then
      version="${range#^}"
    elif ! version="$(newest_in_range "$name" "$range")"; then
      version="$(installed_version "$MATRIX_DIR/newest" "$name")"
      [ -n "$version" ] || { echo "peer matrix: the registry is not reachable and no newest $name was installed before" >&2; return 1; }
      echo "peer matrix: the registry is not reachable; newest $name stays at $version, installed earlier" >&2
    fi
    specs+=("$name@$version")
  done
  install_cell "$cell" "${specs[@]}"
  local expect
  expect="$(IFS=,; echo "${specs[*]}")"
  echo "peer matrix, cell \"$cell\": ${specs[*]} (from $MATRIX_DIR/$cell)"
  local started=$SECONDS
  PEER_MATRIX_MODULES="$MATRIX_DIR/$cell/node_modules" PEER_MATRIX_EXPECT="$expect" \
    "$NODE" node_modules/vitest/vitest.mjs run --config vitest.peers.config.ts "${FILES[@]}"
  echo "peer matrix, cell \"$cell\" passed in $((SECONDS - started)) s: ${specs[*]}"
}

cells=("$@")
[ "${#cells[@]}" -gt 0 ] || cells=(oldest newest)
for cell in "${cells[@]}"; do
  case "$cell" in
    oldest | newest) run_cell "$cell" ;;
    *) echo "peer matrix: unknown cell \"$cell\" (oldest or newest)" >&2; exit 2 ;;
  esac
done
