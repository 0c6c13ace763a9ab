#!/bin/sh
# The hard tangles of issue 19, all into one directory, for bench/run_hard_tangles.py:
#   bench/make_hard_tangles.sh OUTDIR
# - Blender 3.4's cloth, self-collision off (bench/make_blender_tangles.py --cases hard):
#   sphere_100[_tri], tube_open_{a,b,c}[_tri], garment[_tri], with their .pc2 caches
# - self-crossing spiral sheets (bench/make_spiral_sheets.py): spiral_{eight,loops,roll}[_tri]
# - the seven Wicke canonical configurations of Untangling26 (bench/data/wicke/), subdivided
#   three times at edge midpoints as their authors do (bench/subdivide_obj.py): wicke_*.obj
# - grid sheets that cross exactly along mesh vertices (bench/make_exact_crossings.py):
#   cross_exact[_tri], slot_exact[_tri]
# Needs blender on PATH and a python3 with numpy (PYTHON=... to choose it).
set -e
out=${1:?usage: bench/make_hard_tangles.sh OUTDIR}
here=$(dirname "$0")
python=${PYTHON:-python3}
mkdir -p "$out"
blender -b --factory-startup --python-exit-code 1 --python "$here/make_blender_tangles.py" -- \
    "$out" --cases hard
"$python" "$here/make_spiral_sheets.py" "$out" --triangulate
"$python" "$here/subdivide_obj.py" --wicke "$out" --levels 3
"$python" "$here/make_exact_crossings.py" "$out" --triangulate
