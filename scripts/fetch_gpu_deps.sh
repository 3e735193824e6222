#!/usr/bin/env bash
# Downloads, on the development machine (Debian 12), the .deb packages that
# scripts/gpu_check.sh unpacks on a GPU test host lacking them: MPICH (launcher, library,
# compiler wrappers, headers) with every library it links, and the header/test libraries
# collbench builds against (CLI11, nlohmann-json, GoogleTest) plus pkgconf. They go into
# .gpu-deps/ (git-ignored), which travels with the working tree to the GPU host.
#
#   scripts/fetch_gpu_deps.sh [DIR]     (default DIR: .gpu-deps)
#
# Then checks that the unpacked MPICH finds every library it needs inside the set, apart
# from the C library itself, so nothing is missing on a host that has no MPI at all.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-.gpu-deps}

# ldd /usr/lib/x86_64-linux-gnu/libmpich.so.12: libhwloc15, libucx0 (ucp, uct, ucs, ucm),
# libnuma1, libudev1; mpiexec.hydra adds libslurm38. libmpich-dev has mpi.h, libmpich.so
# and the mpicxx wrapper. UCX's InfiniBand modules (libuct_ib, libuct_rdmacm) are plugins
# UCX skips when their libraries are absent; a GPU host without a network needs none.
packages=(
  mpich libmpich12 libmpich-dev
  libhwloc15 libucx0 libnuma1 libudev1 libslurm38
  libcli11-dev nlohmann-json3-dev libgtest-dev
  pkgconf-bin libpkgconf3
)

mkdir -p "$dest"
rm -f "$dest"/*.deb
echo "fetch_gpu_deps: downloading ${#packages[@]} packages into $dest/"
if ! (cd "$dest" && apt-get download "${packages[@]}"); then
  echo "fetch_gpu_deps: apt-get download failed; try 'apt-get update' first" >&2
  exit 1
fi

# Unpack into a scratch folder and resolve every binary and library against it alone.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for deb in "$dest"/*.deb; do dpkg -x "$deb" "$scratch"; done
libdir=$scratch/usr/lib/x86_64-linux-gnu
libpath=$libdir:$scratch/lib/x86_64-linux-gnu
# What any Linux host provides (glibc and the loader); everything else must come from us.
system='^(linux-vdso|libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64)\.so'
missing=0
for f in "$libdir"/libmpich.so.12 "$scratch"/usr/bin/mpiexec.hydra \
         "$scratch"/usr/bin/hydra_pmi_proxy "$libdir"/ucx/libuct_cma.so.0 "$scratch"/usr/bin/pkgconf; do
  while read -r name _ path _; do
    [[ $name =~ $system ]] && continue
    if [[ $path != "$scratch"* ]]; then
      echo "fetch_gpu_deps: $(basename "$f") needs $name, not in the set (found: ${path:-nothing})" >&2
      missing=1
    fi
  done < <(LD_LIBRARY_PATH=$libpath ldd "$f" | grep '=>')
done
[ "$missing" = 0 ] || exit 1

ndebs=$(ls "$dest"/*.deb | wc -l)
find "$scratch" -name '*.a' ! -name 'libgtest*' ! -name 'libgmock*' -delete  # GTest's CMake targets name its .a
rm -rf "$scratch"/usr/share/doc "$scratch"/usr/share/man "$scratch"/usr/share/lintian \
  "$scratch"/usr/lib/x86_64-linux-gnu/fortran "$scratch"/usr/lib/x86_64-linux-gnu/libmpichfort*
tar -C "$scratch" -cJf "$dest/kit.tar.xz" .
rm -f "$dest"/*.deb
(cd "$dest" && sha256sum -- kit.tar.xz > SHA256SUMS)
echo "fetch_gpu_deps: ok: $ndebs packages in $dest/kit.tar.xz, $(du -sh "$dest/kit.tar.xz" | cut -f1);" \
     "every library MPICH links resolves inside the set"
