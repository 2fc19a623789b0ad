# Sixth session of 2026-12-01, run 1: Triton's launch plans against 2e805c1 (host dispatch at
# R=1, three trees alternated three times), then the Triton GPU tests on the new tree.
R=$PWD
O=$OUT/run-1; mkdir -p $O
cp .ab/s6run1.sh $O/command.sh
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv
  python3 -c "import torch, triton, cupy, numba_cuda, numpy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__, 'numba_cuda', numba_cuda.__version__, 'numpy', numpy.__version__)"
  for tree in .ab/tbase .; do
    PYTHONPATH=/tmp/site:$R/$tree python3 -c "from masks.compare import code_fingerprint; print('$tree code_sha256', code_fingerprint())"
  done
} > $O/env.txt 2>&1
cat $O/env.txt
noraw() {
  PYTHONPATH=/tmp/site:$R python3 -c "import runpy, sys; import masks.backends.triton as t; t._RAW_LAUNCHER = False; sys.argv = ['dispatch_profile.py', *sys.argv[1:]]; runpy.run_path('benchmarks/dispatch_profile.py', run_name='__main__')" "$@"
}
for round in 1 2 3; do
  PYTHONPATH=/tmp/site:$R/.ab/tbase python3 benchmarks/dispatch_profile.py --backends triton --no-profile --json $O/d-base-$round.json > $O/d-base-$round.txt 2>&1
  PYTHONPATH=/tmp/site:$R python3 benchmarks/dispatch_profile.py --backends triton --no-profile --json $O/d-plan-$round.json > $O/d-plan-$round.txt 2>&1
  noraw --backends triton --no-profile --json $O/d-planrun-$round.json > $O/d-planrun-$round.txt 2>&1
  tail -n 6 $O/d-*-$round.txt
done
PYTHONPATH=/tmp/site:$R python3 benchmarks/dispatch_profile.py --out $O/dispatch_profile.txt --json $O/d-all.json > /dev/null 2>&1
head -n 14 $O/dispatch_profile.txt
PYTHONPATH=/tmp/site:$R timeout 330 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py tests/test_fuzz.py tests/test_gpu_reliability.py -k triton --junitxml $O/junit-triton.xml > $O/pytest-triton.log 2>&1
tail -n 15 $O/pytest-triton.log
cd $OUT && tar -czf s.tgz run-1
