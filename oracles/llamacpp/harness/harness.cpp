// The answer-parsing oracle: reads a completion back the way llama-server does, with
// llama.cpp's own `common` library (chat templates, autoparser, PEG chat parser).
//
// Input: JSON lines on stdin, one request each:
//   {"id": any, "template": text, "bos_token": "", "eos_token": "",
//    "messages": [...OpenAI messages...], "tools": [...] or null,
//    "tool_choice": "auto", "add_generation_prompt": true,
//    "enable_thinking": true|false|null (null: as llama-server's `--reasoning auto`),
//    "reasoning_format": "auto"|"none"|"deepseek"|"deepseek-legacy",
//    "parse_tool_calls": true, "parallel_tool_calls": true|false|null (null: the caps),
//    "chat_template_kwargs": {...}, "now": epoch seconds (optional),
//    "continue_final_message": true|"content"|"reasoning_content", "json_schema": text,
//    "server_prefill": true (false: no prefill of a trailing assistant message),
//    "server_checks": false (true: first the request checks llama-server makes),
//    "vocab": path of a GGUF file (optional: the model whose vocabulary gives BOS/EOS
//             and whether the vocabulary adds them, in place of bos_token/eos_token),
//    "completions": [text, ...]}
// Output: one JSON line each: the params llama-server derives from the request (format
// name, prompt, generation_prompt, thinking tags...), the template's capabilities (what
// /props reports as chat_template_caps) and, per completion, the parsed message or the
// exception text; or "error" when the request is refused or the template cannot be applied.
//
// The steps follow tools/server/server-common.cpp `oaicompat_chat_params_parse`, the
// request schema in server-schema.cpp and `server_task_result_cmpl_final::update`
// (server-task.h/.cpp) for a non-streaming chat completion; /apply-template is the same
// parse, answering the prompt.

#include "harness_support.h"
#include "log.h"

#include <chrono>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

namespace {

template <typename T> T value_or(const json & body, const char * key, T fallback) {
    if (body.contains(key) && !body.at(key).is_null()) {
        return body.at(key).get<T>();
    }
    return fallback;
}

json tool_calls_json(const common_chat_msg & msg) {
    json calls = json::array();
    for (const auto & call : msg.tool_calls) {
        calls.push_back({{"name", call.name}, {"arguments", call.arguments}, {"id", call.id}});
    }
    return calls;
}

// What one completion reads as: the parser's message, and the message the server's
// response carries (an empty parse falls back to the raw text, as to_json_oaicompat_chat
// does; the server also fills empty tool call ids with random strings, left out here).
json read_completion(const std::string & text, const common_chat_parser_params & params) {
    json out;
    try {
        common_chat_msg msg = common_chat_parse(text, /* is_partial= */ false, params);
        out["result"] = {
            {"content", msg.content},
            {"reasoning_content", msg.reasoning_content},
            {"tool_calls", tool_calls_json(msg)},
            {"empty", msg.empty()},
        };
        common_chat_msg sent = msg;
        if (msg.empty()) {
            sent         = common_chat_msg();
            sent.role    = "assistant";
            sent.content = text;
        }
        out["message"] = from_lib(sent.to_json_oaicompat());
    } catch (const std::exception & e) {
        out["error"] = e.what();
    }
    return out;
}

// Where the library's debug log goes while a template is applied (argv[1]), to learn
// which path built the parser: a specialised handler or the differential autoparser.
std::string g_handler_log;

common_chat_params apply_noting_handler(const common_chat_templates *        tmpls,
                                        const common_chat_templates_inputs & inputs,
                                        json &                               out) {
    if (g_handler_log.empty()) {
        return common_chat_templates_apply(tmpls, inputs);
    }
    common_log_set_file(common_log_main(), g_handler_log.c_str());
    common_log_set_verbosity_thold(LOG_LEVEL_DEBUG);
    common_chat_params chat;
    try {
        chat = common_chat_templates_apply(tmpls, inputs);
    } catch (...) {
        common_log_flush(common_log_main());
        common_log_set_verbosity_thold(-1);
        throw;
    }
    common_log_flush(common_log_main());
    common_log_set_verbosity_thold(-1);
    std::ifstream log(g_handler_log);
    std::string   line;
    out["handler"] = "";
    while (std::getline(log, line)) {
        const std::string special = "Using specialized template: ";
        auto              at      = line.find(special);
        if (at != std::string::npos) {
            out["handler"] = line.substr(at + special.size());
            break;
        }
        if (line.find("using differential autoparser") != std::string::npos) {
            out["handler"] = "autoparser";
            break;
        }
    }
    return chat;
}

// The checks oaicompat_chat_params_parse (tools/server/server-common.cpp) makes before
// it builds the inputs, with its messages; the server answers them with HTTP 400.
void check_request_as_server(const json & req) {
    for (const auto & msg : req.at("messages")) {
        const std::string role = msg.value("role", "");
        if (role != "assistant" && !msg.contains("content")) {
            throw std::invalid_argument("All non-assistant messages must contain 'content'");
        }
        if (role == "assistant") {
            if (!msg.contains("content") && !msg.contains("tool_calls")) {
                throw std::invalid_argument("Assistant message must contain either 'content' or 'tool_calls'!");
            }
            if (!msg.contains("content")) {
                continue;
            }
        }
        const json & content = msg.at("content");
        if (content.is_string() || content.is_null()) {
            continue;
        }
        if (!content.is_array()) {
            throw std::invalid_argument("Expected 'content' to be a string or an array");
        }
        for (const auto & part : content) {
            const std::string type = part.value("type", "");
            if (type == "image_url") {
                throw std::runtime_error("image input is not supported - hint: if this is unexpected, you may need to provide the mmproj");
            }
            if (type == "input_audio") {
                throw std::runtime_error("audio input is not supported - hint: if this is unexpected, you may need to provide the mmproj");
            }
            if (type != "text") {
                throw std::invalid_argument("unsupported content[].type");
            }
        }
    }
}

// The continuation rules of oaicompat_chat_params_parse: a trailing assistant message is
// prefilled (--prefill-assistant is on by default) unless "server_prefill" is false (as
// llama.cpp's own tests build the inputs).
void continue_as_server(const json & req, common_chat_templates_inputs & inputs) {
    if (req.contains("continue_final_message")) {
        inputs.continue_final_message = common_chat_continuation_parse(to_lib(req.at("continue_final_message")));
    }
    const auto & msgs = inputs.messages;
    if (value_or<bool>(req, "server_prefill", true) &&
        inputs.continue_final_message == COMMON_CHAT_CONTINUATION_NONE &&
        !msgs.empty() && msgs.back().role == "assistant") {
        if (msgs.size() >= 2 && msgs[msgs.size() - 2].role == "assistant") {
            throw std::invalid_argument("Cannot have 2 or more assistant messages at the end of the list.");
        }
        inputs.continue_final_message = COMMON_CHAT_CONTINUATION_AUTO;
        inputs.add_generation_prompt  = false;
    }
    if (!value_or<bool>(req, "server_checks", false)) {
        return;
    }
    if (inputs.continue_final_message != COMMON_CHAT_CONTINUATION_NONE && inputs.add_generation_prompt) {
        throw std::invalid_argument("Cannot set both add_generation_prompt and continue_final_message to true.");
    }
#ifdef HARNESS_REFUSES_CONTINUED_TOOL_CALLS
    if (inputs.continue_final_message != COMMON_CHAT_CONTINUATION_NONE && !msgs.empty() &&
        msgs.back().role == "assistant" && !msgs.back().tool_calls.empty()) {
        throw std::invalid_argument("Cannot continue an assistant message that contains tool calls.");
    }
#endif
}

// chat_template_kwargs as the server merges them, and its reading of "enable_thinking".
void kwargs_as_server(const json & req, common_chat_templates_inputs & inputs) {
    if (!req.contains("chat_template_kwargs") || !req.at("chat_template_kwargs").is_object()) {
        return;
    }
    for (const auto & item : req.at("chat_template_kwargs").items()) {
        inputs.chat_template_kwargs[item.key()] = item.value().dump();
    }
    auto kw = inputs.chat_template_kwargs.find("enable_thinking");
    if (kw == inputs.chat_template_kwargs.end()) {
        return;
    }
    if (kw->second == "true") {
        inputs.enable_thinking = true;
    } else if (kw->second == "false") {
        inputs.enable_thinking = false;
    } else if (!kw->second.empty() && kw->second[0] == '"') {
        throw std::invalid_argument("invalid type for \"enable_thinking\" (expected boolean, got string)");
    }
}

json run_request(const json & req) {
    json out;
    out["id"] = req.value("id", json());

    const llama_model * model = nullptr;
    if (req.contains("vocab") && !req.at("vocab").is_null()) {
        model = vocab_model(req.at("vocab").get<std::string>());
    }
    auto tmpls = common_chat_templates_init(model, req.at("template").get<std::string>(),
                                            value_or<std::string>(req, "bos_token", ""),
                                            value_or<std::string>(req, "eos_token", ""));
    auto caps  = common_chat_templates_get_caps(tmpls.get());
    out["caps"] = caps;  // what /props reports: the server loaded the template
    if (value_or<bool>(req, "server_checks", false)) {
        check_request_as_server(req);
    }

    json tools       = req.value("tools", json());
    auto tool_choice = value_or<std::string>(req, "tool_choice", "auto");

    common_chat_templates_inputs inputs;
    inputs.messages            = common_chat_msgs_parse_oaicompat(to_lib(req.at("messages")));
    inputs.tools               = common_chat_tools_parse_oaicompat(to_lib(tools));
    inputs.tool_choice         = common_chat_tool_choice_parse_oaicompat(tool_choice);
    inputs.use_jinja           = true;
    inputs.parallel_tool_calls = value_or<bool>(req, "parallel_tool_calls",
                                                caps["supports_parallel_tool_calls"]);
    inputs.add_generation_prompt = value_or<bool>(req, "add_generation_prompt", true);
    inputs.json_schema           = value_or<std::string>(req, "json_schema", "");
    continue_as_server(req, inputs);
    inputs.reasoning_format =
        common_reasoning_format_from_name(value_or<std::string>(req, "reasoning_format", "auto"));
    // The server's default: thinking on when the template supports it (`--reasoning auto`).
    inputs.enable_thinking = value_or<bool>(
        req, "enable_thinking", common_chat_templates_support_enable_thinking(tmpls.get()));
    kwargs_as_server(req, inputs);
    g_pinned_time = 0;
    if (req.contains("now") && !req.at("now").is_null()) {
        g_pinned_time = req.at("now").get<long long>();
        inputs.now    = std::chrono::system_clock::time_point(std::chrono::seconds(g_pinned_time));
    }

    common_chat_params chat = apply_noting_handler(tmpls.get(), inputs, out);

    out["format"]             = common_chat_format_name(chat.format);
    out["prompt"]             = chat.prompt;
    out["generation_prompt"]  = chat.generation_prompt;
    out["supports_thinking"]  = chat.supports_thinking;
    out["thinking_start_tag"] = chat.thinking_start_tag;
    out["thinking_end_tags"]  = chat.thinking_end_tags;
    out["additional_stops"]   = chat.additional_stops;
    out["preserved_tokens"]   = chat.preserved_tokens;
    out["grammar_lazy"]       = chat.grammar_lazy;
    out["has_grammar"]        = !chat.grammar.empty();
    out["has_parser"]         = !chat.parser.empty();
    out["enable_thinking"]    = inputs.enable_thinking;
    out["parallel_tool_calls"] = inputs.parallel_tool_calls;

    // The server sends the params through its task JSON (server-schema.cpp): the format
    // as a number, the generation prompt, the serialised parser (loaded again), the
    // reasoning format; parse_tool_calls is forced on when the request has tools.
    common_chat_parser_params params(chat);
    params.reasoning_format     = inputs.reasoning_format;
    params.reasoning_in_content = false;  // non-streaming
    params.parse_tool_calls     = value_or<bool>(req, "parse_tool_calls", true);
    if (!inputs.tools.empty() && inputs.tool_choice != COMMON_CHAT_TOOL_CHOICE_NONE) {
        params.parse_tool_calls = true;
    }
    params.is_continuation = inputs.continue_final_message != COMMON_CHAT_CONTINUATION_NONE;
    if (!chat.parser.empty()) {
        params.parser.load(chat.parser);
    }
    out["parse_tool_calls"] = params.parse_tool_calls;

    json results = json::array();
    for (const auto & completion : req.value("completions", json::array())) {
        results.push_back(read_completion(completion.get<std::string>(), params));
    }
    out["results"] = results;
    return out;
}

}  // namespace

int main(int argc, char ** argv) {
    // The library's warnings ("unparsed ... output") go to stderr; keep stdout JSON only.
    common_log_set_verbosity_thold(-1);
    if (argc > 1) {
        g_handler_log = argv[1];
    }
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        json out;
        try {
            out = run_request(json::parse(line));
        } catch (const std::exception & e) {
            json id;
            try {
                id = json::parse(line).value("id", json());
            } catch (...) {
            }
            out = {{"id", id}, {"error", e.what()}};
        }
        std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
        std::cout.flush();
    }
    return 0;
}
