// What the harness needs around llama.cpp's chat API, across builds:
// - its own JSON (nlohmann's ordered_json, for the lines it reads and writes) handed to a
//   library that takes either the same type (up to ~b11000) or `common_json`, the wrapper
//   later builds introduced (CMake defines HARNESS_COMMON_JSON when common/json.h exists);
// - a vocabulary loaded as llama-server loads a model's (only the vocabulary), so that the
//   templates get the model's BOS/EOS texts and llama.cpp's "the vocabulary adds BOS"
//   trimming, exactly as /apply-template renders;
// - a clock pinned by the request, for templates that print today's date
//   (pinned_clock.cpp).
#pragma once

#include "chat.h"
#include "llama.h"

#include <nlohmann/json.hpp>

#include <ctime>
#include <map>
#include <stdexcept>
#include <string>

// The second the wall clock reads while a request pins it; 0: the real clock.
extern std::time_t g_pinned_time;

using json = nlohmann::ordered_json;

#ifdef HARNESS_COMMON_JSON
#    include "json.h"
using lib_json = common_json;

// Our JSON as the library's (by its text: the two types share no representation).
inline lib_json to_lib(const json & value) {
    return common_json::parse(value.dump());
}

// The library's JSON as ours.
inline json from_lib(const lib_json & value) {
    return json::parse(value.dump());
}
#else
using lib_json = json;

inline const json & to_lib(const json & value) {
    return value;
}

inline const json & from_lib(const json & value) {
    return value;
}
#endif

// The library's log lines would go to stderr; the harness keeps them out.
inline void quiet_llama_log(ggml_log_level, const char *, void *) {}

// A model loaded for its vocabulary only, once per file (llama-server's /apply-template
// reads BOS/EOS and add_bos/add_eos from the model's vocabulary).
inline const llama_model * vocab_model(const std::string & path) {
    static std::map<std::string, llama_model *> loaded;
    auto                                        found = loaded.find(path);
    if (found != loaded.end()) {
        return found->second;
    }
    static bool backend = false;
    if (!backend) {
        llama_log_set(quiet_llama_log, nullptr);
        llama_backend_init();
        backend = true;
    }
    llama_model_params params = llama_model_default_params();
    params.vocab_only         = true;
    llama_model * model       = llama_model_load_from_file(path.c_str(), params);
    if (model == nullptr) {
        throw std::runtime_error("cannot load the vocabulary " + path);
    }
    loaded[path] = model;
    return model;
}
