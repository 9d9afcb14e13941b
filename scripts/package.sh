#!/usr/bin/env bash
# Builds the Debian package dist/nicmatrix_VERSION_ARCH.deb from the build/ tree (CPack's DEB generator):
# builds only what the package ships (target nm_installed: the executable, the Python module, the man pages
# and completions; nothing when scripts/build.sh already built it), then stages the install and packs it.
# Check the result with scripts/check-package.sh (as root: installs, uses and removes it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh nm_installed

# The package's changelog must have an entry for the version it carries.
version=$(sed -n 's/^project(nicmatrix VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
changelog=$(sed -n '1s/^nicmatrix (\([^)]*\)).*/\1/p' packaging/changelog)
if [ "$version" != "$changelog" ]; then
  echo "package.sh: packaging/changelog's latest entry is $changelog, the project is $version: add an entry" >&2
  exit 1
fi

rm -rf build/cpack
(cd build && timeout 600 cpack -G DEB --config CPackConfig.cmake >/dev/null)
mkdir -p dist
deb=$(ls build/cpack/nicmatrix_*.deb)
rm -f dist/nicmatrix_*.deb
mv "$deb" dist/
rm -rf build/cpack
echo "dist/$(basename "$deb")"
