# Run 2: CuPy's launch plans against d846bbf (host dispatch at R=1, two trees alternated three
# times), then the GPU tests of the CuPy backend and the shared-shape threads test of every
# backend on the new tree.
R=$PWD
O=$OUT/run-2; mkdir -p $O
cp .ab/s6run2.sh $O/command.sh
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv
  for tree in .ab/cbase .; do
    (cd /tmp && PYTHONPATH=/tmp/site:$R/$tree python3 -c "import masks; from masks.compare import code_fingerprint; print('$tree', masks.__file__, 'code_sha256', code_fingerprint())")
  done
} > $O/env.txt 2>&1
cat $O/env.txt
for round in 1 2 3; do
  PYTHONPATH=/tmp/site:$R/.ab/cbase python3 benchmarks/dispatch_profile.py --backends cupy --no-profile --json $O/d-base-$round.json > $O/d-base-$round.txt 2>&1
  PYTHONPATH=/tmp/site:$R python3 benchmarks/dispatch_profile.py --backends cupy --no-profile --json $O/d-plan-$round.json > $O/d-plan-$round.txt 2>&1
  tail -n 6 $O/d-*-$round.txt
done
PYTHONPATH=/tmp/site:$R python3 benchmarks/dispatch_profile.py --out $O/dispatch_profile.txt --json $O/d-all.json > /dev/null 2>&1
head -n 14 $O/dispatch_profile.txt
PYTHONPATH=/tmp/site:$R timeout 300 python3 -m pytest -q -rs -p no:cacheprovider tests/test_cupy_backend.py tests/test_conformance.py tests/test_fuzz.py tests/test_gpu_reliability.py -k "cupy or one_shape" --junitxml $O/junit-cupy.xml > $O/pytest-cupy.log 2>&1
tail -n 15 $O/pytest-cupy.log
cd $OUT && tar -czf s.tgz run-2
