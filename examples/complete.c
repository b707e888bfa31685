/* Loads a GGUF model and streams a completion of a prompt to stdout (wisp's C API).
 *   complete_c MODEL.gguf "PROMPT" [N_TOKENS] */
#include <stdio.h>
#include <stdlib.h>

#include <wisp/wisp.h>

/* Called once per generated token with its id and the text it completes (maybe none yet). */
static int print_piece(int32_t token, const char* text, size_t len, void* user_data) {
  size_t* n_tokens = (size_t*)user_data;
  (void)token;
  ++*n_tokens;
  fwrite(text, 1, len, stdout);
  fflush(stdout);
  return 0; /* nonzero would stop the generation here */
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODEL.gguf PROMPT [N_TOKENS]\n", argv[0]);
    return 2;
  }
  wisp_model* model = NULL;
  if (wisp_model_load(argv[1], &model) != WISP_OK) {
    fprintf(stderr, "error: %s\n", wisp_last_error());
    return 1;
  }
  wisp_session_params sp = wisp_session_default_params();
  sp.n_ctx = 512;
  sp.exact = 1; /* llama.cpp's float orders: a greedy completion is llama.cpp's too */
  wisp_session* session = NULL;
  if (wisp_session_create(model, &sp, &session) != WISP_OK) {
    fprintf(stderr, "error: %s\n", wisp_last_error());
    wisp_model_free(model);
    return 1;
  }
  wisp_generate_params gp = wisp_generate_default_params();
  gp.n_predict = argc > 3 ? strtoul(argv[3], NULL, 10) : 32;
  gp.sampler.temperature = 0; /* greedy */
  size_t n_tokens = 0;
  wisp_status st = wisp_generate_tokens(session, argv[2], &gp, print_piece, &n_tokens, NULL);
  printf("\n");
  if (st != WISP_OK)
    fprintf(stderr, "error: %s\n", wisp_last_error());
  else
    fprintf(stderr, "wisp %s: %zu tokens\n", wisp_version(), n_tokens);
  wisp_session_free(session);
  wisp_model_free(model);
  return st == WISP_OK ? 0 : 1;
}
