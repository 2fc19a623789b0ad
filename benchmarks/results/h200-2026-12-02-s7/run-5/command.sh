# Run 5 (session 2026-12-02-s7): run 4's comparison with the driver launch given the kernel's
# CUfunction (B2), and each launch timed alone, to split a call between the driver and Python
# (numba_launch_ab2.py, copied here).
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s17run5.sh $S/command.sh; cp .ab/numba_launch_ab2.py $S/
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 200 python3 $R/.ab/numba_launch_ab2.py $S/launch_ab.json > $S/launch_ab.txt 2>&1); echo "ab rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-5
cat $S/env.txt; tail -n 30 $S/launch_ab.txt
