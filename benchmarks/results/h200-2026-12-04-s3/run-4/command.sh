# Run 4 (session 2026-12-04-s3): the strengthened empty-shape conformance test natively.
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s29run4.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 150 python3 -m pytest -v -rs -p no:cacheprovider tests/test_conformance.py -k empty_dimensions > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tail -n 5 $S/pytest.log; cat $S/env.txt
