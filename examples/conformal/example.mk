# conformal (conformal-sim, conformal-cv): the Barber et al. simulation (coverage and length per method at p = 5 and p = 50) and
# every method on sklearn's diabetes data over three random splits.
EXAMPLES += conformal
CONFORMAL_SEEDS := 0 1 2

conformal: conformal/out/sim/results.csv conformal/out/diabetes.csv

conformal/out/sim/results.csv: conformal/configs/sim.yaml
	$(PAPERKIT) conformal-sim --config $< --seed 0 --run-dir conformal/out/sim --force -q > /dev/null

.PRECIOUS: conformal/out/data%/train.csv
conformal/out/data%/train.csv: conformal/split_diabetes.py
	mkdir -p $(@D)
	python $< $* $(@D)

conformal/out/diabetes-seed%.json: conformal/configs/diabetes.yaml conformal/out/data%/train.csv
	$(PAPERKIT) conformal-cv --config $< --train conformal/out/data$*/train.csv \
	  --test conformal/out/data$*/test.csv --seed $* --summary $@ -q \
	  -o conformal/out/diabetes-seed$*.csv > /dev/null

conformal/out/diabetes.csv: conformal/summarize_diabetes.py $(foreach s,$(CONFORMAL_SEEDS),conformal/out/diabetes-seed$(s).json)
	python $< $@ $(filter %.json,$^)
