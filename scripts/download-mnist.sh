#!/usr/bin/env bash
# Downloads the full MNIST set (4 gzipped IDX files, 11 MB) into DIR (default
# data/mnist) and verifies each file's SHA-256 checksum. Files already present
# with the right checksum are kept; a file with a wrong checksum is replaced.
# Mirrors are tried in order (Yann LeCun's original site now refuses most
# clients, so it is not among them).
# Usage: scripts/download-mnist.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-data/mnist}

mirrors=(
  https://ossci-datasets.s3.amazonaws.com/mnist
  https://storage.googleapis.com/cvdf-datasets/mnist
)
# sha256 of the original files (md5: f68b3c2d..., d53e105e..., 9fb629c4..., ec29112d...).
declare -A sha256=(
  [train-images-idx3-ubyte.gz]=440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609
  [train-labels-idx1-ubyte.gz]=3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c
  [t10k-images-idx3-ubyte.gz]=8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6
  [t10k-labels-idx1-ubyte.gz]=f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6
)
files=(train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz
       t10k-labels-idx1-ubyte.gz)

if command -v curl >/dev/null; then
  fetch() { curl --fail --silent --show-error --location --connect-timeout 15 --retry 2 -o "$2" "$1"; }
elif command -v wget >/dev/null; then
  fetch() { wget --quiet --timeout=15 --tries=2 -O "$2" "$1"; }
else
  echo "download-mnist: neither curl nor wget is installed" >&2
  exit 1
fi

verified() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

mkdir -p "$dir"
for f in "${files[@]}"; do
  if verified "$dir/$f" "${sha256[$f]}"; then
    echo "download-mnist: $dir/$f present, checksum ok"
    continue
  fi
  tmp="$dir/$f.part"
  ok=0
  for m in "${mirrors[@]}"; do
    echo "download-mnist: fetching $m/$f"
    if ! fetch "$m/$f" "$tmp" 2>"$dir/.download-error"; then
      echo "download-mnist:   failed: $(tail -n 1 "$dir/.download-error")" >&2
      continue
    fi
    if verified "$tmp" "${sha256[$f]}"; then
      mv "$tmp" "$dir/$f"
      ok=1
      break
    fi
    echo "download-mnist:   checksum mismatch for $m/$f (expected ${sha256[$f]})" >&2
  done
  rm -f "$tmp" "$dir/.download-error"
  if [ "$ok" -ne 1 ]; then
    echo "download-mnist: could not download $f from any mirror." >&2
    echo "  Are you offline? Copy the four files (${files[*]}) into $dir by hand," >&2
    echo "  or train on the sample in data/mnist-sample/." >&2
    exit 1
  fi
done
echo "download-mnist: MNIST ready in $dir"
