//===- Artifact.cpp - A compiled artifact directory, loaded ---------------===//
//
// This file implements Artifact.h: the manifest reader (a small JSON parser, for
// the runtime has no JSON library) and the loader of libmodel.so.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime/Artifact.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

namespace kiln::rt {
namespace {

/// A JSON value: what the manifest needs (objects, arrays, strings, numbers,
/// booleans, null).
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> items;
  std::map<std::string, Json> fields;

  const Json *get(const std::string &key) const {
    auto it = fields.find(key);
    return kind == Object && it != fields.end() ? &it->second : nullptr;
  }
  std::string str(const std::string &key) const {
    const Json *v = get(key);
    return v && v->kind == String ? v->string : "";
  }
  int64_t integer(const std::string &key) const {
    const Json *v = get(key);
    return v && v->kind == Number ? static_cast<int64_t>(v->number) : 0;
  }
};

class JsonParser {
public:
  explicit JsonParser(const std::string &text) : s(text) {}

  /// The document, or false with `error` saying where it broke.
  bool parse(Json &out, std::string &error) {
    if (!value(out, 0) || (skip(), pos != s.size())) {
      error = "invalid JSON at byte " + std::to_string(pos);
      return false;
    }
    return true;
  }

private:
  void skip() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\n' || s[pos] == '\t' ||
                              s[pos] == '\r'))
      ++pos;
  }
  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (s.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }
  bool string(std::string &out) {
    if (s[pos] != '"')
      return false;
    for (++pos; pos < s.size() && s[pos] != '"'; ++pos) {
      char c = s[pos];
      if (c == '\\') {
        if (++pos >= s.size())
          return false;
        switch (s[pos]) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'u': {
          if (pos + 4 >= s.size())
            return false;
          unsigned code = std::strtoul(s.substr(pos + 1, 4).c_str(), nullptr, 16);
          pos += 4;
          if (code >= 0x80) // the emitter writes ASCII escapes only below 0x20
            return false;
          c = static_cast<char>(code);
          break;
        }
        default: c = s[pos]; // " \ /
        }
      }
      out += c;
    }
    if (pos >= s.size())
      return false;
    ++pos;
    return true;
  }
  bool value(Json &out, int depth) {
    skip();
    if (pos >= s.size() || depth > 32)
      return false;
    char c = s[pos];
    if (c == '{') {
      out.kind = Json::Object;
      ++pos;
      skip();
      if (pos < s.size() && s[pos] == '}')
        return ++pos, true;
      for (;;) {
        std::string key;
        skip();
        if (pos >= s.size() || !string(key))
          return false;
        skip();
        if (pos >= s.size() || s[pos++] != ':' || !value(out.fields[key], depth + 1))
          return false;
        skip();
        if (pos < s.size() && s[pos] == ',') {
          ++pos;
          continue;
        }
        return pos < s.size() && s[pos++] == '}';
      }
    }
    if (c == '[') {
      out.kind = Json::Array;
      ++pos;
      skip();
      if (pos < s.size() && s[pos] == ']')
        return ++pos, true;
      for (;;) {
        out.items.emplace_back();
        if (!value(out.items.back(), depth + 1))
          return false;
        skip();
        if (pos < s.size() && s[pos] == ',') {
          ++pos;
          continue;
        }
        return pos < s.size() && s[pos++] == ']';
      }
    }
    if (c == '"') {
      out.kind = Json::String;
      return string(out.string);
    }
    for (bool value : {true, false})
      if (literal(value ? "true" : "false")) {
        out.kind = Json::Bool;
        out.boolean = value;
        return true;
      }
    if (literal("null"))
      return true;
    char *end = nullptr;
    out.number = std::strtod(s.c_str() + pos, &end);
    if (end == s.c_str() + pos)
      return false;
    out.kind = Json::Number;
    pos = static_cast<size_t>(end - s.c_str());
    return true;
  }

  const std::string &s;
  size_t pos = 0;
};

bool readTensors(const Json *list, std::vector<Manifest::Tensor> &out) {
  if (!list || list->kind != Json::Array)
    return false;
  for (const Json &t : list->items) {
    const Json *shape = t.get("shape");
    if (!shape || shape->kind != Json::Array)
      return false;
    Manifest::Tensor tensor{t.str("name"), t.str("dtype"), {}};
    for (const Json &d : shape->items)
      tensor.shape.push_back(static_cast<int64_t>(d.number));
    out.push_back(std::move(tensor));
  }
  return true;
}

bool isFile(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status loadError(std::string message) {
  return Status::error(std::move(message), KILN_ERROR_LOAD);
}

} // namespace

Status readManifest(const std::string &dir, Manifest &m) {
  std::string path = dir + "/manifest.json";
  std::ifstream in(path);
  if (!in)
    return loadError(path + " not found (not a Kiln artifact, or compiled by a Kiln "
                            "before manifests: recompile it)");
  std::stringstream text;
  text << in.rdbuf();
  std::string textString = text.str();
  Json doc;
  std::string error;
  if (!JsonParser(textString).parse(doc, error))
    return loadError(path + ": " + error);
  m = Manifest();
  m.version = static_cast<int>(doc.integer("kiln_manifest"));
  if (doc.kind != Json::Object || m.version != 1)
    return loadError(path + ": not a Kiln manifest (version 1)");
  m.name = doc.str("name");
  m.target = doc.str("target");
  m.gpuArch = doc.str("gpu_arch");
  m.abiVersion = static_cast<int>(doc.integer("abi_version"));
  m.weightsFormat = static_cast<int>(doc.integer("weights_format"));
  m.precision = doc.str("precision");
  m.embeddedWeights = doc.get("embedded_weights") && doc.get("embedded_weights")->boolean;
  if (const Json *calls = doc.get("library_calls")) {
    m.libraryCalls = calls->integer("count");
    m.libraryEngine = calls->str("engine");
  }
  if (!readTensors(doc.get("inputs"), m.inputs) || !readTensors(doc.get("outputs"), m.outputs))
    return loadError(path + ": inputs or outputs missing or malformed");
  return Status::ok();
}

Artifact::~Artifact() { close(); }

void Artifact::close() {
  if (model_ && abi_.kiln_model_destroy)
    abi_.kiln_model_destroy(model_);
  model_ = nullptr;
  if (handle_)
    dlclose(handle_);
  handle_ = nullptr;
}

Status Artifact::open(const std::string &dir) {
  close();
  Status s = readManifest(dir, manifest_);
  if (!s)
    return s;
  if (manifest_.abiVersion != KILN_ABI_VERSION)
    return loadError(dir + " was compiled for C ABI version " +
                     std::to_string(manifest_.abiVersion) + "; this runtime speaks " +
                     std::to_string(KILN_ABI_VERSION) + " (recompile it with this Kiln)");
  std::string lib = dir + "/libmodel.so";
  if (!isFile(lib))
    return loadError(lib + " not found (compile with --emit lib)");
  // dlopen searches the library path for a name without a slash.
  std::string openPath = lib.find('/') == std::string::npos ? "./" + lib : lib;
  handle_ = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    return loadError("cannot load " + lib + ": " + dlerror());
  std::string missing;
#define KILN_ABI_FIND(name)                                                           \
  abi_.name = reinterpret_cast<decltype(abi_.name)>(dlsym(handle_, #name));           \
  if (!abi_.name && missing.empty())                                                  \
    missing = #name;
  KILN_MODEL_ABI_FUNCTIONS(KILN_ABI_FIND)
#undef KILN_ABI_FIND
  if (!missing.empty())
    return loadError(lib + " is not a Kiln model library: it lacks " + missing);
  if (abi_.kiln_abi_version() != KILN_ABI_VERSION)
    return loadError(lib + " has C ABI version " + std::to_string(abi_.kiln_abi_version()) +
                     "; this runtime speaks " + std::to_string(KILN_ABI_VERSION) +
                     " (recompile it with this Kiln)");
  // Without model.weights, a model compiled with --embed-weights uses its own.
  std::string weights = dir + "/model.weights";
  bool haveFile = isFile(weights);
  model_ = abi_.kiln_model_create(haveFile ? weights.c_str() : nullptr);
  if (!model_)
    return Status::error("out of memory creating the model", KILN_ERROR_MEMORY);
  if (const char *e = abi_.kiln_model_error(model_))
    return Status::error(haveFile ? e : weights + " is missing: " + e,
                         abi_.kiln_model_status(model_));
  inputs_.assign(abi_.kiln_model_num_inputs(model_), kiln_tensor_info{});
  outputs_.assign(abi_.kiln_model_num_outputs(model_), kiln_tensor_info{});
  for (int32_t i = 0; i < static_cast<int32_t>(inputs_.size()); ++i)
    abi_.kiln_model_input_info(model_, i, &inputs_[i]);
  for (int32_t i = 0; i < static_cast<int32_t>(outputs_.size()); ++i)
    abi_.kiln_model_output_info(model_, i, &outputs_[i]);
  return Status::ok();
}

size_t tensorBytes(const kiln_tensor_info &info) {
  size_t n = dtypeSize(static_cast<DType>(info.dtype));
  for (int32_t d = 0; d < info.rank; ++d)
    n *= static_cast<size_t>(info.shape[d]);
  return n;
}

} // namespace kiln::rt
