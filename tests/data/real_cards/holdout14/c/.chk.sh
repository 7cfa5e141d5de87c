#!/bin/bash
# usage: .chk.sh id-or-url ...
cd /work
for id in "$@"; do
  a=$(grep -cF "$id" corpus-claims.txt); b=$(grep -rlF "$id" main/tests/data/ | wc -l); echo "$id claims=$a data=$b"
done
