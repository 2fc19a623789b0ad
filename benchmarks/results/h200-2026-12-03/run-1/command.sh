# Run 1 (session 2026-12-03): benchmarks/traffic_floor.py twice at R = 256 and 512 with the chunk
# floors added (traffic_floor.cu `chunk_floor`: a one-wave grid at the row floor's residency,
# rows ignored; each warp one equal contiguous range of the flat input, or the warps taking its
# groups in turn). Where between the row floor (`fused`'s partition) and the grid-stride floor
# do they fall: is the gap at one wave of rows the balance of work, the order of the loads, or
# the residency? The package (masks/) is the committed one.
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s24run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
for round in 1 2; do
  s=$SECONDS; PYTHONPATH=$P timeout 150 python3 -W ignore::DeprecationWarning benchmarks/traffic_floor.py --num-reqs 256,512 --out $S/traffic_floor-$round.json > $S/traffic_floor-$round.txt 2>&1
  echo "floor-$round rc $? $((SECONDS-s)) s" >> $S/env.txt
done
tar -czf $OUT/s.tgz -C $OUT run-1; cut -c1-330 $S/traffic_floor-1.txt; cut -c1-330 $S/traffic_floor-2.txt; cat $S/env.txt
