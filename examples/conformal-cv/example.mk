# conformal-cv: the Barber et al. simulation (coverage and length per method at p = 5 and p = 50) and
# every method on sklearn's diabetes data over three random splits.
EXAMPLES += conformal-cv
CONFORMAL_SEEDS := 0 1 2

conformal-cv: conformal-cv/out/sim/results.csv conformal-cv/out/diabetes.csv

conformal-cv/out/sim/results.csv: conformal-cv/configs/sim.yaml
	$(PAPERKIT) conformal-sim --config $< --seed 0 --run-dir conformal-cv/out/sim --force -q > /dev/null

.PRECIOUS: conformal-cv/out/data%/train.csv
conformal-cv/out/data%/train.csv: conformal-cv/split_diabetes.py
	mkdir -p $(@D)
	python $< $* $(@D)

conformal-cv/out/diabetes-seed%.json: conformal-cv/configs/diabetes.yaml conformal-cv/out/data%/train.csv
	$(PAPERKIT) conformal-cv --config $< --train conformal-cv/out/data$*/train.csv \
	  --test conformal-cv/out/data$*/test.csv --seed $* --summary $@ -q \
	  -o conformal-cv/out/diabetes-seed$*.csv > /dev/null

conformal-cv/out/diabetes.csv: conformal-cv/summarize_diabetes.py $(foreach s,$(CONFORMAL_SEEDS),conformal-cv/out/diabetes-seed$(s).json)
	python $< $@ $(filter %.json,$^)
