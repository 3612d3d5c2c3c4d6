// Recursive-descent reader of generic MLIR into raw ops (see ir/text_syntax.h).
#include "ir/text_syntax.h"

#include <algorithm>
#include <cctype>

namespace cagr::text {

std::string Source::where(size_t offset) const {
  offset = std::min(offset, text.size());
  size_t line = 1, lineStart = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  }
  return name + ":" + std::to_string(line) + ":" + std::to_string(offset - lineStart + 1);
}

Status Source::error(size_t offset, const std::string& message, ErrorCode code) const {
  return Status(code, where(offset) + ": " + message);
}

bool RawType::isStatic() const {
  return std::none_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; });
}

std::string RawType::str() const {
  std::string s = "tensor<";
  for (int64_t d : dims) s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + dtypeName(dtype) + ">";
}

const RawNamedAttr* RawOp::findAttr(std::string_view n) const {
  for (const RawNamedAttr& a : attrs) {
    if (a.name == n) return &a;
  }
  return nullptr;
}

int64_t RawOp::numResults() const {
  int64_t n = 0;
  for (const RawResultGroup& r : results) n += r.count;
  return n;
}

namespace {

constexpr int kMaxDepth = 32;

bool isIdStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }
bool isSuffixChar(char c) { return isIdChar(c) || c == '-'; }
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool isHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

class SyntaxParser {
 public:
  explicit SyntaxParser(const Source& src) : src_(src), t_(src.text) {}

  StatusOr<RawOp> parseModule() {
    skipAliases();
    RawOp op;
    CAGR_RETURN_IF_ERROR(parseTopOp(op));
    skipAliases();
    if (!atEnd()) return err("expected end of input");
    return op;
  }

 private:
  // -- characters and trivia --
  bool atEnd() const { return p_ >= t_.size(); }
  char peek(size_t ahead = 0) const { return p_ + ahead < t_.size() ? t_[p_ + ahead] : '\0'; }

  void skipTrivia() {
    while (!atEnd()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++p_;
      } else if (c == '/' && peek(1) == '/') {
        while (!atEnd() && peek() != '\n') ++p_;
      } else {
        break;
      }
    }
  }

  // `#alias = ...` definitions (one line each) and `{-# ... #-}` resource blocks.
  void skipAliases() {
    for (skipTrivia(); !atEnd(); skipTrivia()) {
      if (peek() == '#') {
        while (!atEnd() && peek() != '\n') ++p_;
      } else if (t_.substr(p_, 3) == "{-#") {
        size_t e = t_.find("#-}", p_);
        p_ = e == std::string_view::npos ? t_.size() : e + 3;
      } else {
        break;
      }
    }
  }

  // What the next token looks like, for messages.
  std::string found() {
    skipTrivia();
    if (atEnd()) return "end of input";
    size_t e = p_ + 1;
    if (isSuffixChar(peek()) || peek() == '%' || peek() == '"' || peek() == '^' || peek() == '#') {
      while (e < t_.size() && e < p_ + 24 && (isSuffixChar(t_[e]) || t_[e] == '#')) ++e;
    }
    return "'" + std::string(t_.substr(p_, e - p_)) + "'";
  }

  Status err(const std::string& expected) {
    std::string f = found();
    return src_.error(p_, expected + ", found " + f);
  }

  bool consumeIf(char c) {
    skipTrivia();
    if (peek() != c) return false;
    ++p_;
    return true;
  }

  bool consumeIf(std::string_view s) {
    skipTrivia();
    if (t_.substr(p_, s.size()) != s) return false;
    p_ += s.size();
    return true;
  }

  Status expect(char c) {
    if (consumeIf(c)) return Status::ok();
    return err(std::string("expected '") + c + "'");
  }

  Status expect(std::string_view s) {
    if (consumeIf(s)) return Status::ok();
    return err("expected '" + std::string(s) + "'");
  }

  // -- tokens --
  bool peekIdentifier(std::string_view word) {
    skipTrivia();
    return t_.substr(p_, word.size()) == word && !isIdChar(peek(word.size()));
  }

  Status parseIdentifier(std::string& out, const char* what) {
    skipTrivia();
    if (!isIdStart(peek())) return err(std::string("expected ") + what);
    size_t b = p_;
    while (!atEnd() && isIdChar(peek())) ++p_;
    out.assign(t_.substr(b, p_ - b));
    return Status::ok();
  }

  Status parseString(std::string& out) {
    skipTrivia();
    if (peek() != '"') return err("expected a string literal");
    size_t start = p_++;
    out.clear();
    while (true) {
      if (atEnd() || peek() == '\n') return src_.error(start, "unterminated string literal");
      char c = t_[p_++];
      if (c == '"') return Status::ok();
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek();
      if (e == '\\' || e == '"') {
        out += e;
        ++p_;
      } else if (e == 'n' || e == 't') {
        out += e == 'n' ? '\n' : '\t';
        ++p_;
      } else if (isHexDigit(e) && isHexDigit(peek(1))) {
        out += static_cast<char>(std::stoi(std::string(t_.substr(p_, 2)), nullptr, 16));
        p_ += 2;
      } else {
        return src_.error(p_ - 1, "unknown escape in string literal");
      }
    }
  }

  Status parseSsaName(std::string& out) {
    skipTrivia();
    if (peek() != '%' || !isSuffixChar(peek(1))) return err("expected an SSA value name (%name)");
    size_t b = p_++;
    while (!atEnd() && isSuffixChar(peek())) ++p_;
    out.assign(t_.substr(b, p_ - b));
    return Status::ok();
  }

  Status parseUnsigned(int64_t& out, const char* what) {
    skipTrivia();
    if (!isDigit(peek())) return err(std::string("expected ") + what);
    size_t b = p_;
    out = 0;
    while (isDigit(peek())) {
      if (out > (INT64_MAX - 9) / 10) return src_.error(b, std::string(what) + " is too large");
      out = out * 10 + (t_[p_++] - '0');
    }
    return Status::ok();
  }

  // [-] (0x hex | digits [. digits] [e [+-] digits]) | true | false
  Status parseScalar(RawScalar& s) {
    skipTrivia();
    s.pos = p_;
    if (peekIdentifier("true") || peekIdentifier("false")) {
      s.kind = RawScalar::kBool;
      s.text = t_.substr(p_, peek() == 't' ? 4 : 5);
      p_ += s.text.size();
      return Status::ok();
    }
    s.negative = peek() == '-';
    if (s.negative) ++p_;
    if (!isDigit(peek())) return err("expected a number");
    size_t b = p_;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X') && isHexDigit(peek(2))) {
      p_ += 2;
      while (isHexDigit(peek())) ++p_;
      s.kind = RawScalar::kHex;
    } else {
      while (isDigit(peek())) ++p_;
      s.kind = RawScalar::kInt;
      if (peek() == '.') {
        s.kind = RawScalar::kFloat;
        for (++p_; isDigit(peek());) ++p_;
        if ((peek() == 'e' || peek() == 'E') &&
            (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
          p_ += 2;
          while (isDigit(peek())) ++p_;
        }
      }
    }
    s.text = t_.substr(b, p_ - b);
    return Status::ok();
  }

  // -- types --
  Status parseTensorType(RawType& t) {
    skipTrivia();
    t.pos = p_;
    if (!peekIdentifier("tensor")) return err("expected a tensor type");
    p_ += 6;
    CAGR_RETURN_IF_ERROR(expect('<'));
    t.dims.clear();
    while (true) {
      skipTrivia();
      if (peek() == '?') {
        ++p_;
        t.dims.push_back(-1);
      } else if (isDigit(peek())) {
        int64_t d;
        CAGR_RETURN_IF_ERROR(parseUnsigned(d, "a dimension"));
        t.dims.push_back(d);
      } else {
        break;
      }
      CAGR_RETURN_IF_ERROR(expect('x'));
    }
    size_t elemPos = (skipTrivia(), p_);
    std::string elem;
    CAGR_RETURN_IF_ERROR(parseIdentifier(elem, "an element type"));
    auto dt = parseDType(elem);
    if (!dt.isOk()) return src_.error(elemPos, "unsupported element type '" + elem + "'");
    t.dtype = *dt;
    return expect('>');
  }

  Status parseTypeList(std::vector<RawType>& out) {
    CAGR_RETURN_IF_ERROR(expect('('));
    if (consumeIf(')')) return Status::ok();
    do {
      out.emplace_back();
      CAGR_RETURN_IF_ERROR(parseTensorType(out.back()));
    } while (consumeIf(','));
    return expect(')');
  }

  Status parseFunctionType(RawOp& op) {
    CAGR_RETURN_IF_ERROR(parseTypeList(op.operandTypes));
    CAGR_RETURN_IF_ERROR(expect("->"));
    skipTrivia();
    if (peek() == '(') return parseTypeList(op.resultTypes);
    op.resultTypes.emplace_back();
    return parseTensorType(op.resultTypes.back());
  }

  // -- attributes --
  Status parseDenseList(RawAttr& a, size_t depth) {
    if (depth > kMaxDepth) return err("dense literal nested too deeply");
    if (!consumeIf('[')) {
      skipTrivia();
      auto d = static_cast<int64_t>(depth);
      if (a.listLeafDepth >= 0 && a.listLeafDepth != d) return err("expected elements at one nesting depth");
      a.listLeafDepth = d;
      a.denseElems.emplace_back();
      return parseScalar(a.denseElems.back());
    }
    int64_t count = 0;
    size_t start = p_;
    if (!consumeIf(']')) {
      do {
        CAGR_RETURN_IF_ERROR(parseDenseList(a, depth + 1));
        ++count;
      } while (consumeIf(','));
      CAGR_RETURN_IF_ERROR(expect(']'));
    }
    if (a.listShape.size() <= depth) a.listShape.resize(depth + 1, -1);
    int64_t& dim = a.listShape[depth];
    if (dim >= 0 && dim != count) return src_.error(start, "dense list rows have different lengths");
    dim = count;
    return Status::ok();
  }

  Status parseDense(RawAttr& a) {
    a.kind = RawAttr::kDense;
    CAGR_RETURN_IF_ERROR(expect('<'));
    skipTrivia();
    if (peek() == '>') {
      a.denseForm = RawAttr::kEmpty;
    } else if (peek() == '"') {
      // Scanned in place: hex weights can be hundreds of megabytes.
      size_t pos = p_;
      size_t close = t_.find('"', pos + 1);
      if (close == std::string_view::npos) return src_.error(pos, "unterminated string literal");
      std::string_view body = t_.substr(pos + 1, close - pos - 1);
      if (body.size() < 2 || body[0] != '0' || (body[1] != 'x' && body[1] != 'X')) {
        return src_.error(pos, "expected hex data \"0x...\" in dense literal");
      }
      a.denseForm = RawAttr::kHexData;
      a.hex = body.substr(2);
      if (!std::all_of(a.hex.begin(), a.hex.end(), isHexDigit) || a.hex.size() % 2 != 0) {
        return src_.error(pos, "malformed hex data in dense literal");
      }
      p_ = close + 1;
    } else if (peek() == '[') {
      a.denseForm = RawAttr::kList;
      CAGR_RETURN_IF_ERROR(parseDenseList(a, 0));
    } else {
      a.denseForm = RawAttr::kSplat;
      a.denseElems.emplace_back();
      CAGR_RETURN_IF_ERROR(parseScalar(a.denseElems.back()));
    }
    CAGR_RETURN_IF_ERROR(expect('>'));
    CAGR_RETURN_IF_ERROR(expect(':'));
    return parseTensorType(a.denseType);
  }

  Status parseAttrValue(RawAttr& a, size_t depth) {
    if (depth > kMaxDepth) return err("attribute nested too deeply");
    skipTrivia();
    a.pos = p_;
    if (peek() == '"') {
      a.kind = RawAttr::kString;
      return parseString(a.str);
    }
    if (consumeIf('[')) {
      a.kind = RawAttr::kArray;
      if (consumeIf(']')) return Status::ok();
      do {
        a.elems.emplace_back();
        CAGR_RETURN_IF_ERROR(parseAttrValue(a.elems.back(), depth + 1));
      } while (consumeIf(','));
      return expect(']');
    }
    if (peekIdentifier("dense")) {
      p_ += 5;
      return parseDense(a);
    }
    if (peekIdentifier("opaque")) {  // --mlir-elide-elementsattrs-if-larger
      p_ += 6;
      std::string ignored;
      a.kind = RawAttr::kDense;
      a.denseForm = RawAttr::kElided;
      CAGR_RETURN_IF_ERROR(expect('<'));
      CAGR_RETURN_IF_ERROR(parseString(ignored));
      CAGR_RETURN_IF_ERROR(expect(','));
      CAGR_RETURN_IF_ERROR(parseString(ignored));
      CAGR_RETURN_IF_ERROR(expect('>'));
      CAGR_RETURN_IF_ERROR(expect(':'));
      return parseTensorType(a.denseType);
    }
    if (!(isDigit(peek()) || peek() == '-' || peekIdentifier("true") || peekIdentifier("false"))) {
      return err("expected an attribute value (number, string, list or dense<...>)");
    }
    a.kind = RawAttr::kNumber;
    CAGR_RETURN_IF_ERROR(parseScalar(a.scalar));
    if (consumeIf(':')) {
      std::string type;
      CAGR_RETURN_IF_ERROR(parseIdentifier(type, "a type after ':'"));
      a.typeName = std::move(type);
    }
    return Status::ok();
  }

  Status parseAttrDict(std::vector<RawNamedAttr>& out) {
    CAGR_RETURN_IF_ERROR(expect('{'));
    if (consumeIf('}')) return Status::ok();
    do {
      RawNamedAttr na;
      skipTrivia();
      na.pos = p_;
      if (peek() == '"') {
        CAGR_RETURN_IF_ERROR(parseString(na.name));
      } else {
        CAGR_RETURN_IF_ERROR(parseIdentifier(na.name, "an attribute name"));
      }
      if (consumeIf('=')) {
        CAGR_RETURN_IF_ERROR(parseAttrValue(na.value, 0));
      } else {
        na.value.kind = RawAttr::kUnit;
        na.value.pos = na.pos;
      }
      out.push_back(std::move(na));
    } while (consumeIf(','));
    return expect('}');
  }

  // -- ops and regions --
  // Skips a `loc(...)` annotation if one comes next.
  Status skipLoc() {
    if (!peekIdentifier("loc")) return Status::ok();
    size_t save = p_;
    p_ += 3;
    if (!consumeIf('(')) {
      p_ = save;
      return Status::ok();
    }
    for (int depth = 1; depth > 0;) {
      if (atEnd()) return src_.error(save, "unterminated loc(...)");
      char c = t_[p_];
      if (c == '"') {
        std::string ignored;
        CAGR_RETURN_IF_ERROR(parseString(ignored));
        continue;
      }
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      ++p_;
    }
    return Status::ok();
  }

  Status parseBlockHeader(RawRegion& r) {
    std::string label;
    ++p_;  // '^'
    CAGR_RETURN_IF_ERROR(parseIdentifier(label, "a block label"));
    if (consumeIf('(') && !consumeIf(')')) {
      do {
        RawBlockArg arg;
        skipTrivia();
        arg.pos = p_;
        CAGR_RETURN_IF_ERROR(parseSsaName(arg.name));
        CAGR_RETURN_IF_ERROR(expect(':'));
        CAGR_RETURN_IF_ERROR(parseTensorType(arg.type));
        CAGR_RETURN_IF_ERROR(skipLoc());
        r.args.push_back(std::move(arg));
      } while (consumeIf(','));
      CAGR_RETURN_IF_ERROR(expect(')'));
    }
    return expect(':');
  }

  Status parseRegion(RawRegion& r, size_t depth) {
    if (depth > kMaxDepth) return err("regions nested too deeply");
    skipTrivia();
    r.pos = p_;
    CAGR_RETURN_IF_ERROR(expect('{'));
    skipTrivia();
    if (peek() == '^') CAGR_RETURN_IF_ERROR(parseBlockHeader(r));
    while (true) {
      skipTrivia();
      if (peek() == '}') break;
      if (atEnd()) return err("expected '}' to close the region opened at " + src_.where(r.pos));
      if (peek() == '^') return err("expected an op (regions with several blocks are not supported)");
      r.ops.emplace_back();
      CAGR_RETURN_IF_ERROR(parseOp(r.ops.back(), depth));
    }
    r.end = p_++;
    return Status::ok();
  }

  Status parseResults(RawOp& op) {
    do {
      RawResultGroup g;
      skipTrivia();
      g.pos = p_;
      CAGR_RETURN_IF_ERROR(parseSsaName(g.name));
      if (consumeIf(':')) CAGR_RETURN_IF_ERROR(parseUnsigned(g.count, "a result count"));
      op.results.push_back(std::move(g));
    } while (consumeIf(','));
    return expect('=');
  }

  Status parseOperands(RawOp& op) {
    CAGR_RETURN_IF_ERROR(expect('('));
    if (consumeIf(')')) return Status::ok();
    do {
      RawValueRef ref;
      skipTrivia();
      ref.pos = p_;
      CAGR_RETURN_IF_ERROR(parseSsaName(ref.name));
      if (peek() == '#') {
        ++p_;
        CAGR_RETURN_IF_ERROR(parseUnsigned(ref.index, "a result number after '#'"));
      }
      op.operands.push_back(std::move(ref));
    } while (consumeIf(','));
    return expect(')');
  }

  Status parseOp(RawOp& op, size_t depth) {
    skipTrivia();
    op.pos = p_;
    if (peek() == '%') CAGR_RETURN_IF_ERROR(parseResults(op));
    skipTrivia();
    if (peek() != '"') return err("expected a generic op (\"dialect.op\"(...))");
    CAGR_RETURN_IF_ERROR(parseString(op.name));
    CAGR_RETURN_IF_ERROR(parseOperands(op));
    skipTrivia();
    if (peek() == '[') return err("expected no successors");
    if (consumeIf('(')) {
      do {
        op.regions.emplace_back();
        CAGR_RETURN_IF_ERROR(parseRegion(op.regions.back(), depth + 1));
      } while (consumeIf(','));
      CAGR_RETURN_IF_ERROR(expect(')'));
    }
    skipTrivia();
    if (peek() == '{') CAGR_RETURN_IF_ERROR(parseAttrDict(op.attrs));
    CAGR_RETURN_IF_ERROR(expect(':'));
    CAGR_RETURN_IF_ERROR(parseFunctionType(op));
    return skipLoc();
  }

  // `module [@name] [attributes {...}] { ... }` or a generic op.
  Status parseTopOp(RawOp& op) {
    skipTrivia();
    if (!peekIdentifier("module")) return parseOp(op, 0);
    op.pos = p_;
    op.name = "builtin.module";
    p_ += 6;
    if (consumeIf('@')) {
      std::string ignored;
      skipTrivia();
      CAGR_RETURN_IF_ERROR(peek() == '"' ? parseString(ignored) : parseIdentifier(ignored, "a module name"));
    }
    if (peekIdentifier("attributes")) {
      p_ += 10;
      CAGR_RETURN_IF_ERROR(parseAttrDict(op.attrs));
    }
    op.regions.emplace_back();
    CAGR_RETURN_IF_ERROR(parseRegion(op.regions.back(), 1));
    return skipLoc();
  }

  const Source& src_;
  std::string_view t_;
  size_t p_ = 0;
};

}  // namespace

StatusOr<RawOp> parseRawModule(const Source& src) { return SyntaxParser(src).parseModule(); }

}  // namespace cagr::text
