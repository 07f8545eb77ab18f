# Included after a glibc subdirectory's Makefile by scripts/glibc.sh: lists
# that subdirectory's CET tests and modules, with the environment and
# arguments glibc's own rules run each test with.  An argument that runs
# the test program itself ($(host-test-program-cmd)) becomes ./NAME, for a
# run from the folder that holds the tests.
uibt-cet-tests := $(sort $(filter tst-cet-% tst-setjmp-cet,$(tests)))
uibt-cet-modules := $(sort $(filter tst-cet-%,$(modules-names)))

.PHONY: uibt-list-cet-tests
uibt-list-cet-tests:
	@$(foreach t,$(uibt-cet-tests),echo 'test|$(t)|$($(t)-ENV)|$(strip $(subst $$(host-test-program-cmd),./$(t),$(value $(t)-ARGS)))';)
	@$(foreach m,$(uibt-cet-modules),echo 'module|$(m)';)
