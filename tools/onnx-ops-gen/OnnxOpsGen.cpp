//===- OnnxOpsGen.cpp - Generate the onnx dialect's ops from the schema ---===//
//
// This file implements kiln-onnx-ops-gen, which walks libonnx's schema registry
// (including Kiln's opset 18-21 extensions) and writes dialects/onnx/OnnxOps.td:
// one ODS op per default-domain operator, and one extra op per older version whose
// inputs are not a prefix of the newest version's inputs (for example ResizeV10),
// plus a table the importer uses to pick the op for a (name, version) pair.
//
// Mapping rules:
//   - single input: the type constraint; optional input: that or `none` (the importer
//     passes an onnx.NoValue for a missing one); variadic: Variadic<...>;
//   - attributes are the union over all versions that share the op: INT -> I64Attr,
//     FLOAT -> F32Attr, STRING -> StrAttr, INTS/FLOATS/STRINGS -> arrays, TENSOR ->
//     ElementsAttr, TYPE_PROTO -> TypeAttr; defaults from the newest version;
//   - GRAPH attributes become regions terminated by onnx.Yield;
//   - element types map to MLIR types; string and complex tensors are left out.
//
// Usage: kiln-onnx-ops-gen OUT.td OUT_VERSIONS.inc
//
//===----------------------------------------------------------------------===//
#include "dialects/onnx/OnnxSchemas.h"

#include "onnx/defs/schema.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

using namespace onnx;

namespace {

/// Ops whose hand-written verifier lives in dialects/onnx/OnnxVerifiers.cpp.
const std::set<std::string> kVerifiedOps = {
    "Conv", "Cast", "Transpose", "Concat", "Gemm", "Reshape", "Softmax", "Gather"};

std::string mapElementType(const std::string &t) {
  static const std::map<std::string, std::string> m = {
      {"float", "F32"},   {"float16", "F16"},   {"double", "F64"},
      {"bfloat16", "BF16"}, {"int8", "I8"},     {"int16", "I16"},
      {"int32", "I32"},   {"int64", "I64"},     {"uint8", "UI8"},
      {"uint16", "UI16"}, {"uint32", "UI32"},   {"uint64", "UI64"},
      {"bool", "I1"}};
  auto it = m.find(t);
  return it == m.end() ? "" : it->second;
}

/// Returns the ODS constraint for a list of ONNX type strings.
std::string typeConstraint(const std::vector<std::string> &types) {
  std::vector<std::string> elems;
  bool nonTensor = false;
  for (const std::string &t : types) {
    if (t.rfind("tensor(", 0) != 0) {
      nonTensor = true;
      continue;
    }
    std::string e = mapElementType(t.substr(7, t.size() - 8));
    if (!e.empty() && std::find(elems.begin(), elems.end(), e) == elems.end())
      elems.push_back(e);
  }
  if (nonTensor)
    return "AnyType";
  if (elems.empty())
    return "AnyTensor";
  std::string s = "TensorOf<[";
  for (size_t i = 0; i < elems.size(); ++i)
    s += (i ? ", " : "") + elems[i];
  return s + "]>";
}

std::string formalConstraint(const OpSchema &schema,
                             const OpSchema::FormalParameter &p) {
  std::vector<std::string> types;
  for (const auto *t : p.GetTypes())
    types.push_back(*t);
  std::sort(types.begin(), types.end());
  return typeConstraint(types);
}

/// The ODS operand/result type of a formal parameter: optional ones may be
/// `none`, variadic ones are Variadic<>.
std::string odsFormal(const OpSchema &schema, const OpSchema::FormalParameter &p) {
  std::string c = formalConstraint(schema, p);
  switch (p.GetOption()) {
  case OpSchema::Optional:
    return "AnyTypeOf<[" + c + ", NoneType]>";
  case OpSchema::Variadic:
    return "Variadic<" + c + ">";
  default:
    return c;
  }
}

std::string escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n' || c == '\r')
      c = ' ';
    out += c;
  }
  return out;
}

std::string firstSentence(const std::string &doc, const std::string &name) {
  std::string d;
  for (char c : doc)
    d += (c == '\n' || c == '\r' || c == '`' || c == '*') ? ' ' : c;
  size_t begin = d.find_first_not_of(' ');
  if (begin == std::string::npos)
    return "ONNX " + name;
  d = d.substr(begin);
  size_t end = d.find(". ");
  if (end != std::string::npos)
    d = d.substr(0, end);
  if (d.size() > 100)
    d = d.substr(0, 97) + "...";
  // Collapse runs of spaces.
  std::string out;
  for (char c : d)
    if (!(c == ' ' && !out.empty() && out.back() == ' '))
      out += c;
  return out;
}

struct AttrInfo {
  AttributeProto::AttributeType type;
  bool required = true; // Required in every version sharing the op.
  std::string defaultValue; // ODS default from the newest version, if any.
};

std::string defaultFor(const OpSchema::Attribute &attr) {
  if (!attr.default_value.has_type())
    return "";
  const AttributeProto &v = attr.default_value;
  std::ostringstream os;
  switch (attr.type) {
  case AttributeProto::INT:
    os << v.i();
    return os.str();
  case AttributeProto::FLOAT: {
    os.precision(9);
    os << std::scientific << v.f();
    return os.str();
  }
  case AttributeProto::STRING:
    return "\"" + escape(v.s()) + "\"";
  default:
    return "";
  }
}

std::string odsAttrType(AttributeProto::AttributeType type) {
  switch (type) {
  case AttributeProto::INT:
    return "I64Attr";
  case AttributeProto::FLOAT:
    return "F32Attr";
  case AttributeProto::STRING:
    return "StrAttr";
  case AttributeProto::INTS:
    return "I64ArrayAttr";
  case AttributeProto::FLOATS:
    return "F32ArrayAttr";
  case AttributeProto::STRINGS:
    return "StrArrayAttr";
  case AttributeProto::TENSOR:
    return "ElementsAttr";
  case AttributeProto::TYPE_PROTO:
    return "TypeAttr";
  default:
    return "AnyAttr";
  }
}

std::string odsDefaultWrapper(const AttrInfo &a) {
  std::string t = odsAttrType(a.type);
  if (!a.defaultValue.empty())
    return "DefaultValuedAttr<" + t + ", \"" + escape(a.defaultValue) + "\">";
  if (a.required)
    return t;
  return "OptionalAttr<" + t + ">";
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// True when the inputs `a` of an older version mean the same, position by
/// position, as the first inputs `b` of the newest one. Renames such as mean ->
/// input_mean keep the meaning; a different input at a position does not.
bool isPrefix(const std::vector<std::string> &a,
              const std::vector<std::string> &b) {
  if (a.size() > b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && !endsWith(a[i], b[i]) && !endsWith(b[i], a[i]))
      return false;
  return true;
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Input names, lower-cased: ODS accessors are case-insensitive at the first letter.
std::vector<std::string> inputNames(const OpSchema &s) {
  std::vector<std::string> names;
  for (const auto &in : s.inputs())
    names.push_back(lower(in.GetName()));
  return names;
}

/// True when `older` can be imported as the op defined by `newer`: its inputs mean
/// the same position by position, and none of its attributes became an input
/// (Clip's min, Reduce's axes), which changes the op's meaning as much.
bool isCompatible(const OpSchema &older, const OpSchema &newer) {
  std::vector<std::string> newerInputs = inputNames(newer);
  for (const auto &attr : older.attributes())
    if (std::find(newerInputs.begin(), newerInputs.end(), lower(attr.first)) !=
        newerInputs.end())
      return false;
  return isPrefix(inputNames(older), newerInputs);
}

/// ODS names must be identifiers; a few ONNX formal names are not.
std::string identifier(const std::string &name) {
  std::string out;
  for (char c : name)
    if (isalnum(static_cast<unsigned char>(c)) || c == '_')
      out += c;
  return out;
}

/// Writes one ODS op for `schema` with the attributes in `attrs`.
void emitOp(std::ostream &os, const std::string &opName,
            const OpSchema &schema, const std::map<std::string, AttrInfo> &attrs,
            int firstVersion, int lastVersion) {
  std::string defName = "Onnx_" + opName + "Op";
  bool random = schema.Name().find("Random") != std::string::npos ||
                schema.Name() == "Multinomial" || schema.Name() == "Bernoulli";
  std::vector<std::string> regions;
  for (const auto &it : attrs)
    if (it.second.type == AttributeProto::GRAPH)
      regions.push_back(it.first);

  os << "def " << defName << " : Onnx_Op<\"" << opName << "\", ["
     << (random ? "" : "Pure") << "]> {\n";
  os << "  let summary = \"" << escape(firstSentence(schema.doc() ? schema.doc() : "", schema.Name())) << "\";\n";
  os << "  let description = [{\n    ONNX `" << schema.Name() << "`, versions "
     << firstVersion << " to " << lastVersion
     << ". See https://onnx.ai/onnx/operators/onnx__" << schema.Name()
     << ".html\n  }];\n";

  os << "  let arguments = (ins";
  bool first = true;
  for (const auto &in : schema.inputs()) {
    os << (first ? "\n    " : ",\n    ") << odsFormal(schema, in) << ":$"
       << identifier(in.GetName());
    first = false;
  }
  for (const auto &it : attrs) {
    if (it.second.type == AttributeProto::GRAPH)
      continue;
    os << (first ? "\n    " : ",\n    ") << odsDefaultWrapper(it.second) << ":$"
       << it.first;
    first = false;
  }
  os << ");\n";

  os << "  let results = (outs";
  first = true;
  for (const auto &out : schema.outputs()) {
    os << (first ? "\n    " : ",\n    ") << odsFormal(schema, out) << ":$"
       << identifier(out.GetName());
    first = false;
  }
  os << ");\n";
  if (!regions.empty()) {
    os << "  let regions = (region";
    for (size_t i = 0; i < regions.size(); ++i)
      os << (i ? ", " : " ") << "SizedRegion<1>:$" << regions[i];
    os << ");\n";
  }
  if (kVerifiedOps.count(opName))
    os << "  let hasVerifier = 1;\n";
  os << "}\n\n";
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: kiln-onnx-ops-gen OUT.td OUT_VERSIONS.inc\n";
    return 2;
  }
  kiln::registerOnnxSchemaExtensions();

  // name -> since_version -> schema, default domain only, deprecated versions kept
  // (old models use them).
  std::map<std::string, std::map<int, OpSchema>> byName;
  for (const OpSchema &s : OpSchemaRegistry::get_all_schemas_with_history()) {
    if (s.domain() != ONNX_DOMAIN)
      continue;
    byName[s.Name()].emplace(s.SinceVersion(), s);
  }

  std::ostringstream td, versions, signatures;
  td << "//===- OnnxOps.td - generated by kiln-onnx-ops-gen; do not edit -*- "
        "tablegen -*-===//\n//\n"
     << "// GENERATED FILE. Regenerate with `ninja -C build "
        "regenerate-onnx-ops`.\n"
     << "// Source: the libonnx"
     << " schema registry plus dialects/onnx/OnnxSchemas.cpp.\n//\n"
     << "//===----------------------------------------------------------------"
        "------===//\n\n"
     << "#ifndef KILN_ONNX_OPS_TD\n#define KILN_ONNX_OPS_TD\n\n"
     << "include \"dialects/onnx/OnnxBase.td\"\n\n";
  const char *versionsHeader =
      "// GENERATED by kiln-onnx-ops-gen; do not edit.\n"
      "// KILN_ONNX_VERSIONED_OP(onnx name, since version, dialect op)\n"
      "// KILN_ONNX_OP_SIGNATURE(dialect op, inputs, last input variadic,\n"
      "//                        outputs, last output variadic)\n\n";

  size_t opCount = 0;
  for (auto &[name, schemas] : byName) {
    // Newest first, versions are grouped: a version joins the group of the next
    // newer one when it means the same thing (see isCompatible); every group is one
    // op, the newest group unsuffixed, older ones named after their newest version.
    std::vector<std::vector<const OpSchema *>> groups;
    for (auto it = schemas.rbegin(); it != schemas.rend(); ++it) {
      if (groups.empty() || !isCompatible(it->second, *groups.back().front()))
        groups.emplace_back();
      groups.back().push_back(&it->second);
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      const OpSchema &head = *groups[g].front();
      std::map<std::string, AttrInfo> attrs;
      for (size_t v = 0; v < groups[g].size(); ++v) {
        std::set<std::string> seen;
        for (const auto &[attrName, attr] : groups[g][v]->attributes()) {
          seen.insert(attrName);
          auto found = attrs.find(attrName);
          if (found == attrs.end()) {
            AttrInfo info;
            info.type = attr.type;
            info.required = attr.required && v == 0;
            info.defaultValue = v == 0 ? defaultFor(attr) : "";
            attrs.emplace(attrName, info);
          } else {
            if (!attr.required)
              found->second.required = false;
            // A default is declared only where every version agrees on it: the
            // dialect must not invent an attribute an older version lacks.
            if (defaultFor(attr) != found->second.defaultValue)
              found->second.defaultValue.clear();
          }
        }
        for (auto &[attrName, info] : attrs)
          if (!seen.count(attrName)) {
            info.required = false;
            info.defaultValue.clear();
          }
      }
      bool clash = false;
      for (const auto &in : inputNames(head))
        for (const auto &attr : attrs)
          clash |= lower(attr.first) == in;
      if (clash)
        continue; // An input and an attribute share a name (Split-1): not importable.
      std::string opName =
          g == 0 ? name : name + "V" + std::to_string(head.SinceVersion());
      int first = groups[g].back()->SinceVersion();
      int last = g == 0 ? kiln::kMaxOnnxOpset
                        : groups[g - 1].back()->SinceVersion() - 1;
      emitOp(td, opName, head, attrs, first, last);
      ++opCount;
      auto variadicLast = [](const std::vector<OpSchema::FormalParameter> &p) {
        return !p.empty() && p.back().GetOption() == OpSchema::Variadic;
      };
      signatures << "KILN_ONNX_OP_SIGNATURE(\"onnx." << opName << "\", "
                 << head.inputs().size() << ", "
                 << (variadicLast(head.inputs()) ? "true" : "false") << ", "
                 << head.outputs().size() << ", "
                 << (variadicLast(head.outputs()) ? "true" : "false") << ")\n";
      if (g != 0)
        for (const OpSchema *s : groups[g])
          versions << "KILN_ONNX_VERSIONED_OP(\"" << name << "\", "
                   << s->SinceVersion() << ", \"onnx." << opName << "\")\n";
    }
  }
  td << "#endif // KILN_ONNX_OPS_TD\n";

  std::ofstream tdFile(argv[1]), versionsFile(argv[2]);
  tdFile << td.str();
  versionsFile << versionsHeader << "#ifdef KILN_ONNX_VERSIONED_OP\n" << versions.str()
               << "#undef KILN_ONNX_VERSIONED_OP\n#endif\n\n"
               << "#ifdef KILN_ONNX_OP_SIGNATURE\n" << signatures.str()
               << "#undef KILN_ONNX_OP_SIGNATURE\n#endif\n";
  if (!tdFile || !versionsFile) {
    std::cerr << "kiln-onnx-ops-gen: cannot write outputs\n";
    return 1;
  }
  std::cerr << "kiln-onnx-ops-gen: " << opCount << " ops from " << byName.size()
            << " ONNX operators\n";
  return 0;
}
