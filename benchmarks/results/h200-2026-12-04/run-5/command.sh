# Run 5 (session 2026-12-04): after the spin check was folded into test_no_host_synchronisation:
# that test natively for every backend and variant.
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s27run5.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/test_gpu_reliability.py -k no_host_synchronisation -v > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tail -n 16 $S/pytest.log; cat $S/env.txt
