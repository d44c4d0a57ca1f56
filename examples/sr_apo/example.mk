# sr_apo (sr-apo-search, sr-apo-front, sr-apo-compare): APO fronts of sklearn diabetes column subsets and make_friedman1, merged and plotted,
# and a stepwise linear model compared with the diabetes front.
EXAMPLES += sr_apo
SRAPO_OUT := sr_apo/out
SRAPO_RUNS := diabetes_bmi_s5 diabetes_bmi_bp_s5 friedman1

sr_apo: $(SRAPO_OUT)/fronts.csv $(SRAPO_OUT)/compare.csv

$(SRAPO_OUT)/data/diabetes.csv: sr_apo/make_data.py
	mkdir -p $(@D)
	python sr_apo/make_data.py $(@D)

$(SRAPO_OUT)/data/friedman1.csv $(SRAPO_OUT)/data/stepwise_models.csv: $(SRAPO_OUT)/data/diabetes.csv

$(SRAPO_OUT)/diabetes_bmi_s5/manifest.json: $(SRAPO_OUT)/data/diabetes.csv sr_apo/configs/search.yaml
	$(PAPERKIT) sr-apo-search --config sr_apo/configs/search.yaml --data $< --features bmi,s5 \
	  --name diabetes_bmi_s5 --run-dir $(@D) --force -q > $(@D).json

$(SRAPO_OUT)/diabetes_bmi_bp_s5/manifest.json: $(SRAPO_OUT)/data/diabetes.csv sr_apo/configs/search.yaml
	$(PAPERKIT) sr-apo-search --config sr_apo/configs/search.yaml --data $< --features bmi,bp,s5 \
	  --name diabetes_bmi_bp_s5 --run-dir $(@D) --force -q > $(@D).json

$(SRAPO_OUT)/friedman1/manifest.json: $(SRAPO_OUT)/data/friedman1.csv sr_apo/configs/search.yaml
	$(PAPERKIT) sr-apo-search --config sr_apo/configs/search.yaml --data $< --seeds 11284 --restarts 0 \
	  --name friedman1 --run-dir $(@D) --force -q > $(@D).json

$(SRAPO_OUT)/fronts.csv: $(foreach r,$(SRAPO_RUNS),$(SRAPO_OUT)/$(r)/manifest.json)
	$(PAPERKIT) sr-apo-front --summaries '$(SRAPO_OUT)/*/' --plot $(SRAPO_OUT)/fronts.png -o $@

$(SRAPO_OUT)/compare.csv: $(SRAPO_OUT)/diabetes_bmi_bp_s5/manifest.json $(SRAPO_OUT)/data/stepwise_models.csv
	$(PAPERKIT) sr-apo-compare --front $(SRAPO_OUT)/diabetes_bmi_bp_s5/front.csv \
	  --models $(SRAPO_OUT)/data/stepwise_models.csv --plot $(SRAPO_OUT)/compare.png -o $@
