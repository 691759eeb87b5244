"""A context read under a kvpress press: one prefill from position 0 with the press's hooks, then the
question, the candidates and generated tokens read from the compressed cache with a mask per layer."""
