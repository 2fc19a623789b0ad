# Run 1, second part: benchmarks/traffic_floor.py (its first attempt in s8run1.sh read the
# outputs under wrong attribute names).
S=$OUT/run-1; mkdir -p $S; R=$PWD; cp .ab/s8run1b.sh $S/command-floor.sh
(cd /tmp && PYTHONPATH=/tmp/site:$R python3 -c "from masks.compare import code_fingerprint; print('working tree code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=/tmp/site:$R timeout 300 python3 benchmarks/traffic_floor.py --out $S/traffic_floor.json > $S/traffic_floor.txt 2>&1; echo "floor rc $? $((SECONDS-s)) s" >> $S/times.txt
tar -czf $OUT/s.tgz -C $OUT run-1; cat $S/traffic_floor.txt $S/times.txt
