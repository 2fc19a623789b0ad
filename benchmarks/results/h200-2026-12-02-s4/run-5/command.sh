# Run 5 (session 2026-12-02-s4): what the memory system allows at the target's shapes --
# benchmarks/traffic_floor.py on the committed package (a29a58a: run 4's kernels, comments
# changed): per shape at R = 256/512/1024, the copy of the same bytes, the read-once floors of
# traffic_floor.cu (without and with the outputs written, and through TMA), and each GPU
# backend's default variant on sparse, dense and full rows, all in one process.
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s14run5.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 150 python3 -W ignore::DeprecationWarning benchmarks/traffic_floor.py --out $S/traffic_floor.json > $S/traffic_floor.txt 2>&1
echo "floor rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-5; cat $S/traffic_floor.txt | tail -n 22; cat $S/env.txt
