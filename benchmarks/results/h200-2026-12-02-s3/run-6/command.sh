# Run 6 (session 2026-12-02-s3): the committed package (c442be2: run 5's kernels, the harness
# recording the host name and the GPU's UUID) -- `masks compare --quick` natively, its recorded
# environment printed, and tests/test_compare.py.
S=$OUT/run-6; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s13run6.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $S/env.txt; hostname >> $S/env.txt
PYTHONPATH=$P timeout 100 python3 -m masks compare --quick --out-dir $S/quick --no-progress > $S/quick.txt 2>&1; echo "compare rc $?" >> $S/env.txt
python3 -c "import json; e = json.load(open('$S/quick/compare.json'))['environment']; print({k: e.get(k) for k in ('host', 'device_uuid', 'device_name', 'code_sha256', 'git_commit')})" >> $S/env.txt
PYTHONPATH=$P timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_compare.py > $S/pytest.log 2>&1; echo "pytest rc $?" >> $S/env.txt
rm -f $S/quick/*.png; tar -czf $OUT/s.tgz -C $OUT run-6; cat $S/env.txt; tail -n 2 $S/pytest.log
