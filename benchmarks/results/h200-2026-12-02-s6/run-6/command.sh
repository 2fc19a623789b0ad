# Run 6 (session 2026-12-02-s6): benchmarks/traffic_floor.py twice, with the interleaved row floor
# added (traffic_floor.cu `row_floor` with interleave != 0: one 512-thread block per row whose
# warps take the row's groups of segments in turn, w, w + 16, ..., rather than one contiguous
# range each): does the order in which a row's block reads it explain the gap between `fused`'s
# partition (the row floor) and the grid-stride floor at one wave of rows? The package (masks/)
# is the committed one.
S=$OUT/run-6; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s16run6.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
for round in 1 2; do
  s=$SECONDS; PYTHONPATH=$P timeout 150 python3 -W ignore::DeprecationWarning benchmarks/traffic_floor.py --out $S/traffic_floor-$round.json > $S/traffic_floor-$round.txt 2>&1
  echo "floor-$round rc $? $((SECONDS-s)) s" >> $S/env.txt
done
tar -czf $OUT/s.tgz -C $OUT run-6; cat $S/traffic_floor-1.txt | cut -c1-200; cat $S/env.txt
