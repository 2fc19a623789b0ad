# Run 2 (session 2026-12-02-s5): benchmarks/traffic_floor.py with the row floors added
# (traffic_floor.cu `row_floor`: the same loads and stores with the backends' `fused` partition
# -- blocks of one row, one contiguous range of the row per warp -- held to 1024 threads per
# SM), beside the grid-stride floors and each GPU backend's default variant, in one process;
# twice. The package (masks/) is the committed one.
S=$OUT/run-2; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s15run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
for round in 1 2; do
  s=$SECONDS; PYTHONPATH=$P timeout 150 python3 -W ignore::DeprecationWarning benchmarks/traffic_floor.py --out $S/traffic_floor-$round.json > $S/traffic_floor-$round.txt 2>&1
  echo "floor-$round rc $? $((SECONDS-s)) s" >> $S/env.txt
done
tar -czf $OUT/s.tgz -C $OUT run-2; cat $S/traffic_floor-1.txt | tail -n 22; cat $S/env.txt
