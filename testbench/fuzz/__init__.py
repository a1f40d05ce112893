"""Coverage-guided fuzzing of the gNB pipelines (`make fuzz`): the libFuzzer
harness t4p4s/runtime/fuzz/frame_fuzzer.c linked with the generated C of
p4src/host.p4 and p4src/nic.p4 and the runtime, built with AddressSanitizer
and UndefinedBehaviorSanitizer (t4p4s/runtime/Makefile VARIANT=fuzz)."""
