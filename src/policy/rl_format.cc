// The learned policy's weight table and its `.rlp` file format (version 1):
//   8 bytes  magic "CAGRRLP\0"
//   u32      format version (little-endian)
//   u32      header length, then the header: JSON {"config": {...},
//            "tensors": [{"name", "shape"}, ...], "meta": {...}}
//   float32  every tensor's data, little-endian, in header order; nothing after.
// The header's tensors must be exactly tensorSpecs(config): a file from
// another network shape is refused with the field that differs.
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "policy/rl_model.h"
#include "support/files.h"

namespace cagr::rl {
namespace {

static_assert(std::endian::native == std::endian::little, "the .rlp format is little-endian");
constexpr std::string_view kMagic("CAGRRLP\0", 8);

void linear(std::vector<TensorSpec>& out, const std::string& name, int64_t in, int64_t outDim) {
  out.push_back({name + ".weight", {outDim, in}});
  out.push_back({name + ".bias", {outDim}});
}

std::string shapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// The integer fields of the config, as named in the header; `sized` ones are
// layer widths and counts (1..4096).
struct IntField {
  const char* key;
  int ModelConfig::*field;
  bool sized;
};
constexpr IntField kIntFields[] = {
    {"node_features", &ModelConfig::nodeFeatures, false},
    {"action_features", &ModelConfig::actionFeatures, false},
    {"hw_features", &ModelConfig::hwFeatures, true},
    {"hidden", &ModelConfig::hidden, true},
    {"heads", &ModelConfig::heads, true},
    {"layers", &ModelConfig::layers, true},
    {"film_hidden", &ModelConfig::filmHidden, true},
    {"scorer_hidden", &ModelConfig::scorerHidden, true},
    {"value_hidden", &ModelConfig::valueHidden, true},
};

nlohmann::json configJson(const ModelConfig& c) {
  nlohmann::json j = {{"film", c.film}};
  for (const IntField& f : kIntFields) j[f.key] = c.*f.field;
  return j;
}

StatusOr<ModelConfig> configFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return corrupt("header field 'config' is not an object");
  ModelConfig c;
  for (const IntField& f : kIntFields) {
    if (!j.contains(f.key) || !j[f.key].is_number_integer()) {
      return corrupt(std::string("header field 'config.") + f.key + "' is missing or not an integer");
    }
    c.*f.field = j[f.key].get<int>();
  }
  if (!j.contains("film") || !j["film"].is_boolean()) {
    return corrupt("header field 'config.film' is missing or not a boolean");
  }
  c.film = j["film"].get<bool>();
  return c;
}

// Checks the header's tensor list against the config's.
Status checkTensorList(const nlohmann::json& list, const std::vector<TensorSpec>& want) {
  if (!list.is_array()) return corrupt("header field 'tensors' is not an array");
  if (list.size() != want.size()) {
    return corrupt("header lists " + std::to_string(list.size()) + " tensors; the config has " +
                   std::to_string(want.size()));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    const nlohmann::json& t = list[i];
    std::string where = "header field 'tensors[" + std::to_string(i) + "]'";
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || !t.contains("shape") ||
        !t["shape"].is_array()) {
      return corrupt(where + " needs a string 'name' and an array 'shape'");
    }
    std::string name = t["name"].get<std::string>();
    if (name != want[i].name) return corrupt(where + " is '" + name + "', expected '" + want[i].name + "'");
    std::vector<int64_t> shape;
    for (const auto& d : t["shape"]) {
      if (!d.is_number_integer()) return corrupt("tensor '" + name + "': shape holds a non-integer");
      shape.push_back(d.get<int64_t>());
    }
    if (shape != want[i].shape) {
      return corrupt("tensor '" + name + "' has shape " + shapeString(shape) + ", expected " +
                     shapeString(want[i].shape));
    }
  }
  return Status::ok();
}

// The parse after the magic: version, header, data.
StatusOr<PolicyModel> parseBody(std::string_view bytes) {
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  if (bytes.size() < kMagic.size() + 8) return corrupt("truncated: " + std::to_string(bytes.size()) + " bytes");
  uint32_t version = u32(kMagic.size());
  if (version != kFormatVersion) {
    return unsupported("format version " + std::to_string(version) + "; this build reads version " +
                       std::to_string(kFormatVersion));
  }
  uint32_t headerLen = u32(kMagic.size() + 4);
  size_t pos = kMagic.size() + 8;
  if (bytes.size() - pos < headerLen) return corrupt("truncated header (" + std::to_string(headerLen) + " bytes)");
  nlohmann::json header = nlohmann::json::parse(bytes.substr(pos, headerLen), nullptr, false);
  if (header.is_discarded() || !header.is_object()) return corrupt("the header is not a JSON object");
  pos += headerLen;
  if (!header.contains("config")) return corrupt("header field 'config' is missing");
  CAGR_ASSIGN_OR_RETURN(ModelConfig config, configFromJson(header["config"]));
  CAGR_RETURN_IF_ERROR(validateConfig(config));
  std::vector<TensorSpec> specs = tensorSpecs(config);
  if (!header.contains("tensors")) return corrupt("header field 'tensors' is missing");
  CAGR_RETURN_IF_ERROR(checkTensorList(header["tensors"], specs));
  std::vector<std::vector<float>> tensors;
  for (const TensorSpec& s : specs) {
    size_t need = static_cast<size_t>(s.numel()) * sizeof(float);
    if (bytes.size() - pos < need) {
      return corrupt("truncated: tensor '" + s.name + "' needs " + std::to_string(need) + " bytes, " +
                     std::to_string(bytes.size() - pos) + " left");
    }
    std::vector<float> data(static_cast<size_t>(s.numel()));
    std::memcpy(data.data(), bytes.data() + pos, need);
    pos += need;
    tensors.push_back(std::move(data));
  }
  if (pos != bytes.size())
    return corrupt(std::to_string(bytes.size() - pos) + " unexpected bytes after the last tensor");
  std::string meta = header.contains("meta") ? header["meta"].dump() : "{}";
  return PolicyModel::create(config, std::move(tensors), meta);
}

}  // namespace

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status validateConfig(const ModelConfig& c) {
  for (const IntField& f : kIntFields) {
    int v = c.*f.field;
    if (f.sized && (v <= 0 || v > 4096)) {
      return invalidArgument(std::string("config.") + f.key + " = " + std::to_string(v) + " is out of range (1..4096)");
    }
  }
  if (c.hidden % c.heads != 0) {
    return invalidArgument("config.hidden = " + std::to_string(c.hidden) +
                           " is not a multiple of config.heads = " + std::to_string(c.heads));
  }
  if (c.nodeFeatures != Observation::kNodeFeatures) {
    return invalidArgument("config.node_features = " + std::to_string(c.nodeFeatures) + "; observations have " +
                           std::to_string(Observation::kNodeFeatures));
  }
  if (c.actionFeatures != kActionRow) {
    return invalidArgument("config.action_features = " + std::to_string(c.actionFeatures) + "; action rows have " +
                           std::to_string(kActionRow));
  }
  return Status::ok();
}

std::vector<TensorSpec> tensorSpecs(const ModelConfig& c) {
  const int64_t d = c.hidden, heads = c.heads;
  std::vector<TensorSpec> s;
  s.push_back({"hw.mean", {c.hwFeatures}});
  s.push_back({"hw.scale", {c.hwFeatures}});
  linear(s, "embed", c.nodeFeatures, d);
  if (c.film) linear(s, "film.trunk", c.hwFeatures, c.filmHidden);
  for (int l = 0; l < c.layers; ++l) {
    std::string p = "gat" + std::to_string(l);
    s.push_back({p + ".weight", {d, d}});
    s.push_back({p + ".att_src", {heads, d / heads}});
    s.push_back({p + ".att_dst", {heads, d / heads}});
    s.push_back({p + ".bias", {d}});
    if (c.film) linear(s, "film" + std::to_string(l), c.filmHidden, 2 * d);
  }
  linear(s, "scorer.0", c.actionFeatures + 2 * d, c.scorerHidden);
  linear(s, "scorer.1", c.scorerHidden, 1);
  linear(s, "value.0", d + c.hwFeatures, c.valueHidden);
  linear(s, "value.1", c.valueHidden, 1);
  return s;
}

StatusOr<PolicyModel> PolicyModel::create(const ModelConfig& c, std::vector<std::vector<float>> tensors,
                                          std::string metaJson) {
  CAGR_RETURN_IF_ERROR(validateConfig(c));
  PolicyModel m;
  m.config_ = c;
  m.specs_ = tensorSpecs(c);
  if (tensors.size() != m.specs_.size()) {
    return invalidArgument(std::to_string(tensors.size()) + " tensors given; the config has " +
                           std::to_string(m.specs_.size()));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& s = m.specs_[i];
    if (static_cast<int64_t>(tensors[i].size()) != s.numel()) {
      return invalidArgument("tensor '" + s.name + "' has " + std::to_string(tensors[i].size()) +
                             " elements, expected " + std::to_string(s.numel()) + " " + shapeString(s.shape));
    }
    for (size_t k = 0; k < tensors[i].size(); ++k) {
      if (!std::isfinite(tensors[i][k])) {
        return invalidArgument("tensor '" + s.name + "' element " + std::to_string(k) + " is not finite");
      }
    }
  }
  const std::vector<float>& scale = tensors[1];
  for (size_t k = 0; k < scale.size(); ++k) {
    if (!(scale[k] > 0)) return invalidArgument("tensor 'hw.scale' element " + std::to_string(k) + " is not positive");
  }
  nlohmann::json meta = nlohmann::json::parse(metaJson, nullptr, false);
  if (meta.is_discarded() || !meta.is_object()) return invalidArgument("the metadata is not a JSON object");
  m.tensors_ = std::move(tensors);
  m.meta_ = meta.dump();
  return m;
}

StatusOr<PolicyModel> PolicyModel::parse(std::string_view bytes, const std::string& origin) {
  std::string prefix = "policy file '" + origin + "'";
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    return corrupt(prefix + ": not a CAGR policy (.rlp) file (bad magic)");
  }
  StatusOr<PolicyModel> m = parseBody(bytes);
  if (!m.isOk()) return m.status().withContext(prefix);
  return m;
}

StatusOr<PolicyModel> PolicyModel::load(const std::string& path) {
  CAGR_ASSIGN_OR_RETURN(std::string text, readRegularFile(path, "policy file"));
  return parse(text, path);
}

std::string PolicyModel::serialize() const {
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorSpec& s : specs_) tensors.push_back({{"name", s.name}, {"shape", s.shape}});
  nlohmann::json header = {
      {"config", configJson(config_)}, {"tensors", tensors}, {"meta", nlohmann::json::parse(meta_)}};
  std::string h = header.dump();
  std::string out(kMagic);
  auto put32 = [&out](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  put32(kFormatVersion);
  put32(static_cast<uint32_t>(h.size()));
  out += h;
  for (const auto& t : tensors_) out.append(reinterpret_cast<const char*>(t.data()), t.size() * sizeof(float));
  return out;
}

Status PolicyModel::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::string bytes = serialize();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return invalidArgument("cannot write policy file '" + path + "'");
  return Status::ok();
}

const std::vector<float>* PolicyModel::find(std::string_view name) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name == name) return &tensors_[i];
  }
  return nullptr;
}

}  // namespace cagr::rl
