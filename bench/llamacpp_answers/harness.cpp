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
//    "completions": [text, ...]}
// Output: one JSON line each: the params llama-server derives from the request (format
// name, prompt, generation_prompt, thinking tags...) and, per completion, the parsed
// message or the exception text; or "error" when the template cannot be applied.
//
// The steps follow tools/server/server-common.cpp `oaicompat_chat_params_parse`, the
// request schema in server-schema.cpp and `server_task_result_cmpl_final::update`
// (server-task.h/.cpp) for a non-streaming chat completion at build b10568.

#include "chat.h"
#include "log.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

using json = nlohmann::ordered_json;

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
        out["message"] = sent.to_json_oaicompat();
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

json run_request(const json & req) {
    json out;
    out["id"] = req.value("id", json());

    auto tmpls = common_chat_templates_init(nullptr, req.at("template").get<std::string>(),
                                            value_or<std::string>(req, "bos_token", ""),
                                            value_or<std::string>(req, "eos_token", ""));
    auto caps  = common_chat_templates_get_caps(tmpls.get());

    json tools       = req.value("tools", json());
    auto tool_choice = value_or<std::string>(req, "tool_choice", "auto");

    common_chat_templates_inputs inputs;
    inputs.messages            = common_chat_msgs_parse_oaicompat(req.at("messages"));
    inputs.tools               = common_chat_tools_parse_oaicompat(tools);
    inputs.tool_choice         = common_chat_tool_choice_parse_oaicompat(tool_choice);
    inputs.use_jinja           = true;
    inputs.parallel_tool_calls = value_or<bool>(req, "parallel_tool_calls",
                                                caps["supports_parallel_tool_calls"]);
    inputs.add_generation_prompt = value_or<bool>(req, "add_generation_prompt", true);
    inputs.json_schema           = value_or<std::string>(req, "json_schema", "");
    if (req.contains("continue_final_message")) {
        inputs.continue_final_message = common_chat_continuation_parse(req.at("continue_final_message"));
    }
    // llama-server prefills a trailing assistant message (--prefill-assistant is on by
    // default): it continues that message instead of opening a new one. "server_prefill":
    // false keeps the inputs exactly as given (llama.cpp's own tests build them so).
    if (value_or<bool>(req, "server_prefill", true) &&
        inputs.continue_final_message == COMMON_CHAT_CONTINUATION_NONE &&
        !inputs.messages.empty() && inputs.messages.back().role == "assistant") {
        inputs.continue_final_message = COMMON_CHAT_CONTINUATION_AUTO;
        inputs.add_generation_prompt  = false;
    }
    inputs.reasoning_format =
        common_reasoning_format_from_name(value_or<std::string>(req, "reasoning_format", "auto"));
    // The server's default: thinking on when the template supports it (`--reasoning auto`).
    inputs.enable_thinking = value_or<bool>(
        req, "enable_thinking", common_chat_templates_support_enable_thinking(tmpls.get()));
    if (req.contains("chat_template_kwargs") && req.at("chat_template_kwargs").is_object()) {
        for (const auto & item : req.at("chat_template_kwargs").items()) {
            inputs.chat_template_kwargs[item.key()] = item.value().dump();
        }
        auto kw = inputs.chat_template_kwargs.find("enable_thinking");
        if (kw != inputs.chat_template_kwargs.end()) {
            if (kw->second == "true") {
                inputs.enable_thinking = true;
            } else if (kw->second == "false") {
                inputs.enable_thinking = false;
            }
        }
    }
    if (req.contains("now") && !req.at("now").is_null()) {
        inputs.now = std::chrono::system_clock::time_point(
            std::chrono::seconds(req.at("now").get<long long>()));
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
