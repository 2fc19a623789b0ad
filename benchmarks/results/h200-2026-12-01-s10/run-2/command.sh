# Run 2 (session 2026-12-01-s10): CuPy fused ranking probes on top of prmt (.ab/tq, PROBE_*
# switches through NVRTC options), three rounds. loop32 = a lane's 64 columns ranked as two
# 32-bit words by emit_ids (pass 2's helper) instead of one 64-bit set-bit loop; lane1 = a group
# whose kept columns all lie in one lane is ranked by that lane alone (no regroup, no scan).
S=$OUT/run-2; mkdir -p $S; cp .ab/s10run2.sh $S/command.sh
C=masks.backends.cupy; O='("-std=c++17","-DPROBE_PRMT"'
(cd .ab/tq && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") > $S/env.txt
(cd .ab/tq && PYTHONPATH=/tmp/site:$PWD timeout 280 python3 explore.py $S/tr.json 3 256,512 128256,151936 bf16,fp32 \
  "base=cupy:fused" "prmt=cupy:fused;$C._OPTIONS=$O)" "loop32=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_LOOP32\")" \
  "lane1=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_LANE1\")" "loop32+lane1=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_LOOP32\",\"-DPROBE_LANE1\")" > $S/tr.txt 2>&1; echo "tr rc $?" >> $S/env.txt)
tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/env.txt; grep MISMATCH $S/tr.txt | head; tail -n 25 $S/tr.txt
