// NumPy .npy/.npz reader and writer; see cagr/npz.h for what is supported.
//
// Layout: little-endian byte helpers, the .npy codec (header dictionary
// parser, dtype mapping, Fortran-order transpose), a bounds-checked file
// reader, the zip reader (end-of-central-directory search, ZIP64, stored and
// deflated members, CRC32), and the stored-only zip writer.
#include "cagr/npz.h"
#include "support/files.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <system_error>

namespace cagr {
namespace {

static_assert(std::endian::native == std::endian::little, "npz I/O assumes a little-endian host");

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint64_t k32Max = 0xFFFFFFFFu;
constexpr uint64_t k16Max = 0xFFFFu;
constexpr size_t kEocdSize = 22;
constexpr size_t kLocalHeaderSize = 30;
constexpr std::string_view kNpyMagic("\x93NUMPY", 6);

// ---------------------------------------------------------------- bytes

/// Bounds-checked little-endian reader over a byte range. A read past the
/// end yields zeros and makes ok() false for good.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}

  std::string_view take(size_t n) {
    if (!ok_ || bytes_.size() - pos_ < n) {
      ok_ = false;
      pos_ = bytes_.size();
      return {};
    }
    std::string_view s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  uint64_t le(size_t width) {
    std::string_view s = take(width);
    uint64_t v = 0;
    for (size_t i = 0; i < s.size(); ++i) v |= uint64_t{static_cast<uint8_t>(s[i])} << (8 * i);
    return v;
  }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

/// Appends the low `width` (at most 8) bytes of `v`, little-endian.
void putLE(std::string& out, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string hex32(uint32_t v) {
  char buf[11];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

uint32_t crc32Of(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    crc = static_cast<uint32_t>(crc32(crc, p, chunk));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

// ---------------------------------------------------------------- .npy

struct NpyType {
  DType dtype;
  const char* descr;
};
constexpr NpyType kNpyTypes[] = {{DType::kF32, "<f4"}, {DType::kF64, "<f8"}, {DType::kF16, "<f2"},
                                 {DType::kI64, "<i8"}, {DType::kI32, "<i4"}, {DType::kI8, "|i1"},
                                 {DType::kU8, "|u1"},  {DType::kBool, "|b1"}};

StatusOr<DType> dtypeFromDescr(const std::string& descr, const std::string& ctx) {
  std::string kind = descr.size() == 3 ? descr.substr(1) : "";
  bool oneByte = kind.size() == 2 && kind[1] == '1';
  if (!kind.empty() && descr[0] == '>' && !oneByte) {
    return unsupported(ctx + ": big-endian dtype '" + descr +
                       "' is not supported; save with arr.astype(arr.dtype.newbyteorder('<'))");
  }
  if (!kind.empty() && std::string_view("<|=").find(descr[0]) != std::string_view::npos) {
    for (const NpyType& t : kNpyTypes) {
      if (kind == t.descr + 1) return t.dtype;
    }
  }
  if (kind == "u8" || kind == "u4" || kind == "u2") {
    return unsupported(ctx + ": unsigned dtype '" + descr +
                       "' is not supported; convert to a signed type such as int64 ('<i8')");
  }
  return unsupported(ctx + ": unsupported dtype '" + descr +
                     "' (supported: <f4 <f8 <f2 <i8 <i4 |i1 |u1 |b1)");
}

const char* descrOf(DType t) {
  for (const NpyType& n : kNpyTypes) {
    if (n.dtype == t) return n.descr;
  }
  return "<f4";  // bf16: written as f32 by storable()
}

/// The tensor whose bytes go into a .npy file: bf16 widened to f32.
Tensor storable(const Tensor& t) { return t.dtype() == DType::kBF16 ? t.cast(DType::kF32) : t; }

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  bool structured = false;  // descr was a list: a record dtype
};

std::string_view trim(std::string_view s) {
  s.remove_prefix(std::min(s.size(), s.find_first_not_of(" \t\n")));
  return s.substr(0, s.find_last_not_of(" \t\n") + 1);
}

/// The text after "'key':" in a .npy header dict, or empty if absent.
std::string_view dictValue(std::string_view dict, std::string_view key) {
  for (char q : {'\'', '"'}) {
    size_t at = dict.find(std::string(1, q) + std::string(key) + q);
    if (at == std::string_view::npos) continue;
    std::string_view rest = trim(dict.substr(at + key.size() + 2));
    return rest.starts_with(':') ? trim(rest.substr(1)) : std::string_view();
  }
  return {};
}

/// Parses "(2, 3)", "(5,)" or "()"; false on anything else.
bool parseShape(std::string_view v, std::vector<int64_t>& shape) {
  if (!v.starts_with('(') || v.find(')') == std::string_view::npos) return false;
  v = v.substr(1, v.find(')') - 1);
  while (!v.empty()) {
    size_t comma = std::min(v.size(), v.find(','));
    std::string_view item = v.substr(0, comma);
    v.remove_prefix(std::min(v.size(), comma + 1));
    item = trim(item);
    if (item.ends_with('L')) item.remove_suffix(1);  // Python 2 long literal
    if (item.empty() && v.empty() && !shape.empty()) break;  // trailing comma
    int64_t d = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || d < 0) {
      return false;
    }
    shape.push_back(d);
  }
  return true;
}

/// Parses the Python dict literal of a .npy header, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
/// Returns an empty string on success, else what was wrong.
std::string parseHeader(std::string_view dict, NpyHeader& h) {
  std::string_view descr = dictValue(dict, "descr"), order = dictValue(dict, "fortran_order");
  if (!dict.starts_with('{')) return "expected '{'";
  if (descr.starts_with('[')) {
    h.structured = true;
    return "";
  }
  char q = descr.empty() ? '\0' : descr.front();
  if ((q != '\'' && q != '"') || descr.find(q, 1) == std::string_view::npos) {
    return "missing or non-string 'descr'";
  }
  h.descr = std::string(descr.substr(1, descr.find(q, 1) - 1));
  if (!order.starts_with("True") && !order.starts_with("False")) {
    return "missing or non-boolean 'fortran_order'";
  }
  h.fortranOrder = order.starts_with("True");
  if (!parseShape(dictValue(dict, "shape"), h.shape)) return "missing or malformed 'shape'";
  return "";
}

/// Reorders a column-major (Fortran) tensor's bytes into row-major order.
Tensor fortranToC(const Tensor& f) {
  if (f.rank() <= 1 || f.numel() == 0) return f;
  Tensor c(f.dtype(), f.shape());
  const size_t item = dtypeSize(f.dtype());
  const std::vector<int64_t>& shape = f.shape();
  const size_t rank = shape.size();
  std::vector<int64_t> stride(rank, 1), idx(rank, 0);
  for (size_t k = 1; k < rank; ++k) stride[k] = stride[k - 1] * shape[k - 1];
  int64_t src = 0;
  for (int64_t i = 0, n = f.numel(); i < n; ++i) {
    std::memcpy(c.rawData() + static_cast<size_t>(i) * item,
                f.rawData() + static_cast<size_t>(src) * item, item);
    for (size_t k = rank; k-- > 0;) {  // odometer over the C-order index
      if (++idx[k] < shape[k]) {
        src += stride[k];
        break;
      }
      src -= (shape[k] - 1) * stride[k];
      idx[k] = 0;
    }
  }
  return c;
}

/// Byte count of a tensor of `shape` and `dtype`, or nullopt on overflow.
std::optional<uint64_t> payloadBytes(const std::vector<int64_t>& shape, DType dtype) {
  uint64_t n = dtypeSize(dtype);
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return std::nullopt;
  }
  return n;
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// The magic, version, length and padded dict of a .npy file for `t`
/// (already storable()).
std::string npyHeader(const Tensor& t) {
  std::string dict = std::string("{'descr': '") + descrOf(t.dtype()) +
                     "', 'fortran_order': False, 'shape': " + shapeText(t.shape()) + ", }";
  const bool v2 = dict.size() + 64 > k16Max;
  const size_t prefix = v2 ? 12 : 10;
  const size_t unpadded = prefix + dict.size() + 1;  // + '\n'
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out(kNpyMagic);
  out.push_back(v2 ? 2 : 1);
  out.push_back(0);
  putLE(out, dict.size(), v2 ? 4 : 2);
  return out + dict;
}

// ---------------------------------------------------------------- files

/// Read-only file with bounds-checked positional reads.
class InFile {
 public:
  static StatusOr<InFile> open(const std::string& path) {
    CAGR_RETURN_IF_ERROR(checkRegularFile(path, "npz file"));
    InFile f;
    f.in_.open(path, std::ios::binary);
    if (!f.in_) {
      const std::string why = path + ": cannot open file: " + std::strerror(errno);
      return errno == ENOENT ? notFound(why) : invalidArgument(why);
    }
    f.in_.seekg(0, std::ios::end);
    std::streamoff size = f.in_.tellg();
    if (size < 0) return corrupt(path + ": cannot determine file size");
    f.size_ = static_cast<uint64_t>(size);
    return f;
  }

  uint64_t size() const { return size_; }

  /// Reads [offset, offset+n) into `out`; `what` names the structure for the
  /// "truncated" error, `ctx` prefixes it.
  Status readAt(uint64_t offset, uint64_t n, std::string& out, const std::string& ctx,
                const char* what) {
    if (offset > size_ || n > size_ - offset) {
      return corrupt(ctx + ": truncated or corrupt file: " + what + " needs bytes [" +
                     std::to_string(offset) + ", " + std::to_string(offset + n) +
                     ") but the file has " + std::to_string(size_));
    }
    out.resize(n);
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(out.data(), static_cast<std::streamsize>(n));
    if (!in_) return corrupt(ctx + ": read error in " + what);
    return Status::ok();
  }

 private:
  std::ifstream in_;
  uint64_t size_ = 0;
};

// ---------------------------------------------------------------- zip read

struct ZipMember {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t csize = 0, usize = 0, offset = 0;
};

struct CentralDir {
  uint64_t offset = 0, size = 0, count = 0;
};

/// Explains why no end-of-central-directory record was found.
Status noEocd(InFile& f, const std::string& path) {
  std::string head;
  if (f.readAt(0, std::min<uint64_t>(f.size(), 6), head, path, "file head").isOk()) {
    if (head.starts_with("PK\x03\x04")) {
      return corrupt(path + ": truncated zip archive (no end-of-central-directory record)");
    }
    if (head == kNpyMagic) return invalidArgument(path + ": is a .npy file, not an .npz archive");
  }
  return corrupt(path + ": not a zip/.npz archive (no end-of-central-directory record)");
}

/// Overrides `cd` from a ZIP64 end record if a locator precedes the EOCD.
Status applyZip64Eocd(InFile& f, uint64_t eocdPos, CentralDir& cd, const std::string& path) {
  std::string loc, rec;
  if (eocdPos < 20) return Status::ok();
  CAGR_RETURN_IF_ERROR(f.readAt(eocdPos - 20, 20, loc, path, "ZIP64 locator"));
  Cursor l(loc);
  if (l.u32() != kZip64LocatorSig) return Status::ok();
  l.u32();  // disk holding the ZIP64 record
  CAGR_RETURN_IF_ERROR(f.readAt(l.u64(), 56, rec, path, "ZIP64 end-of-central-directory record"));
  Cursor r(rec);
  if (r.u32() != kZip64EocdSig)
    return corrupt(path + ": bad ZIP64 end-of-central-directory record");
  r.take(20);  // record size, versions, disk numbers
  r.u64();     // entries on this disk
  cd.count = r.u64();
  cd.size = r.u64();
  cd.offset = r.u64();
  return Status::ok();
}

StatusOr<CentralDir> findCentralDir(InFile& f, const std::string& path) {
  const uint64_t tailLen = std::min<uint64_t>(f.size(), kEocdSize + k16Max);
  std::string tail;
  CAGR_RETURN_IF_ERROR(f.readAt(f.size() - tailLen, tailLen, tail, path, "archive tail"));
  size_t p = std::string::npos;
  for (size_t i = tail.size() >= kEocdSize ? tail.size() - kEocdSize + 1 : 0; i-- > 0;) {
    if (Cursor(std::string_view(tail).substr(i)).u32() == kEocdSig) {
      p = i;
      break;
    }
  }
  if (p == std::string::npos) return noEocd(f, path);
  Cursor c(std::string_view(tail).substr(p + 4));
  uint16_t disk = c.u16(), cdDisk = c.u16();
  c.u16();  // entries on this disk
  CentralDir cd;
  cd.count = c.u16();
  cd.size = c.u32();
  cd.offset = c.u32();
  if (disk != 0 || cdDisk != 0) return unsupported(path + ": multi-disk zip archives");
  CAGR_RETURN_IF_ERROR(applyZip64Eocd(f, f.size() - tailLen + p, cd, path));
  return cd;
}

/// Replaces saturated 32-bit fields of `m` from its ZIP64 extra field.
Status applyZip64Extra(std::string_view extra, bool usize64, bool csize64, bool offset64,
                       ZipMember& m, const std::string& ctx) {
  if (!usize64 && !csize64 && !offset64) return Status::ok();
  for (Cursor c(extra); c.ok() && c.remaining() >= 4;) {
    uint16_t id = c.u16(), len = c.u16();
    Cursor field(c.take(len));
    if (id != 1) continue;
    if (usize64) m.usize = field.u64();
    if (csize64) m.csize = field.u64();
    if (offset64) m.offset = field.u64();
    if (field.ok() && c.ok()) return Status::ok();
    break;
  }
  return corrupt(ctx + ": missing or short ZIP64 extra field");
}

StatusOr<ZipMember> parseCentralEntry(Cursor& c, const std::string& path) {
  if (c.u32() != kCentralSig) return corrupt(path + ": bad central directory entry signature");
  ZipMember m;
  c.take(4);  // versions
  m.flags = c.u16();
  m.method = c.u16();
  c.take(4);  // time, date
  m.crc = c.u32();
  m.csize = c.u32();
  m.usize = c.u32();
  uint16_t nameLen = c.u16(), extraLen = c.u16(), commentLen = c.u16();
  c.take(8);  // disk, internal and external attributes
  m.offset = c.u32();
  m.name = std::string(c.take(nameLen));
  std::string_view extra = c.take(extraLen);
  c.take(commentLen);
  if (!c.ok()) return corrupt(path + ": truncated central directory");
  CAGR_RETURN_IF_ERROR(applyZip64Extra(extra, m.usize == k32Max, m.csize == k32Max,
                                       m.offset == k32Max, m, path + ": member '" + m.name + "'"));
  return m;
}

StatusOr<std::vector<ZipMember>> readCentralDir(InFile& f, const CentralDir& cd,
                                                const std::string& path) {
  if (cd.count > cd.size / 46) {
    return corrupt(path + ": central directory claims " + std::to_string(cd.count) +
                   " entries in " + std::to_string(cd.size) + " bytes");
  }
  std::string buf;
  CAGR_RETURN_IF_ERROR(f.readAt(cd.offset, cd.size, buf, path, "central directory"));
  Cursor c(buf);
  std::vector<ZipMember> members;
  for (uint64_t i = 0; i < cd.count; ++i) {
    CAGR_ASSIGN_OR_RETURN(ZipMember m, parseCentralEntry(c, path));
    members.push_back(std::move(m));
  }
  return members;
}

StatusOr<std::string> inflateRaw(const std::string& in, uint64_t usize, const std::string& ctx) {
  if (usize / 1024 > in.size() + 1) {  // deflate cannot exceed ~1032:1
    return corrupt(ctx + ": implausible uncompressed size " + std::to_string(usize));
  }
  std::string out(usize, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -15) != Z_OK) return internalError(ctx + ": inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  size_t inLeft = in.size(), outLeft = out.size();
  int rc = Z_OK;
  while (rc == Z_OK) {
    uInt ai = static_cast<uInt>(std::min<size_t>(inLeft, 1u << 30));
    uInt ao = static_cast<uInt>(std::min<size_t>(outLeft, 1u << 30));
    zs.avail_in = ai;
    zs.avail_out = ao;
    rc = inflate(&zs, Z_NO_FLUSH);
    inLeft -= ai - zs.avail_in;
    outLeft -= ao - zs.avail_out;
  }
  std::string msg = zs.msg ? zs.msg : "";
  inflateEnd(&zs);
  if (rc == Z_STREAM_END && outLeft == 0) return out;
  if (rc == Z_STREAM_END || outLeft == 0) {
    return corrupt(ctx + ": decompressed size differs from the recorded " + std::to_string(usize));
  }
  return corrupt(ctx + ": corrupt deflate stream" + (msg.empty() ? "" : " (" + msg + ")"));
}

/// Returns the uncompressed, CRC-checked bytes of one member.
StatusOr<std::string> readMember(InFile& f, const ZipMember& m, const std::string& ctx) {
  if (m.flags & 1) return unsupported(ctx + ": encrypted zip members are not supported");
  std::string local, raw;
  CAGR_RETURN_IF_ERROR(f.readAt(m.offset, kLocalHeaderSize, local, ctx, "local file header"));
  Cursor c(local);
  if (c.u32() != kLocalSig) return corrupt(ctx + ": bad local file header signature");
  c.take(22);
  uint64_t dataAt = m.offset + kLocalHeaderSize + c.u16();
  dataAt += c.u16();
  CAGR_RETURN_IF_ERROR(f.readAt(dataAt, m.csize, raw, ctx, "member data"));
  std::string data;
  if (m.method == 0) {
    if (m.csize != m.usize) return corrupt(ctx + ": stored member with differing sizes");
    data = std::move(raw);
  } else if (m.method == 8) {
    CAGR_ASSIGN_OR_RETURN(data, inflateRaw(raw, m.usize, ctx));
  } else {
    return unsupported(ctx + ": zip compression method " + std::to_string(m.method) +
                       " (only stored and deflate are supported)");
  }
  uint32_t crc = crc32Of(0, data.data(), data.size());
  if (crc != m.crc) {
    return corrupt(ctx + ": CRC32 mismatch (recorded " + hex32(m.crc) + ", computed " + hex32(crc) +
                   "); the file is corrupt");
  }
  return data;
}

// ---------------------------------------------------------------- zip write

/// Streams a stored (uncompressed) zip archive member by member.
class ZipWriter {
 public:
  ZipWriter(std::ofstream& out, bool forceZip64) : out_(out), force64_(forceZip64) {}

  /// Appends member `name` whose bytes are `head` followed by `body`.
  void add(const std::string& name, const std::string& head, const Tensor& body) {
    const uint64_t size = head.size() + body.byteSize();
    const uint32_t crc =
        crc32Of(crc32Of(0, head.data(), head.size()), body.rawData(), body.byteSize());
    const bool z64 = force64_ || size >= k32Max || offset_ >= k32Max;
    std::string local;
    put(local, {{kLocalSig, 4}});
    putCommon(local, crc, size, z64, name.size(), z64 ? 20 : 0);
    local += name;
    if (z64) put(local, {{1, 2}, {16, 2}, {size, 8}, {size, 8}});  // ZIP64 extra field
    out_.write(local.data(), static_cast<std::streamsize>(local.size()));
    out_.write(head.data(), static_cast<std::streamsize>(head.size()));
    out_.write(reinterpret_cast<const char*>(body.rawData()),
               static_cast<std::streamsize>(body.byteSize()));

    put(central_, {{kCentralSig, 4}, {z64 ? 45 : 20, 2}});  // + version made by
    putCommon(central_, crc, size, z64, name.size(), z64 ? 28 : 0);
    // comment length, disk, internal and external attributes, local header offset
    put(central_, {{0, 2}, {0, 8}, {z64 ? k32Max : offset_, 4}});
    central_ += name;
    if (z64) put(central_, {{1, 2}, {24, 2}, {size, 8}, {size, 8}, {offset_, 8}});
    offset_ += local.size() + size;
    ++count_;
  }

  /// Writes the central directory and end records.
  void finish() {
    const uint64_t cdSize = central_.size(), cdOffset = offset_;
    const bool z64 = force64_ || count_ >= k16Max || cdSize >= k32Max || cdOffset >= k32Max;
    std::string end = central_;
    if (z64) {
      // ZIP64 end record: size of the rest, versions, disk numbers, entry
      // counts, directory size and offset; then the locator pointing at it.
      put(end, {{kZip64EocdSig, 4}, {44, 8}, {45, 2}, {45, 2}, {0, 8}, {count_, 8}, {count_, 8},
                {cdSize, 8}, {cdOffset, 8}});
      put(end, {{kZip64LocatorSig, 4}, {0, 4}, {cdOffset + cdSize, 8}, {1, 4}});
    }
    const uint64_t n16 = z64 ? k16Max : count_;
    put(end, {{kEocdSig, 4}, {0, 4}, {n16, 2}, {n16, 2}, {z64 ? k32Max : cdSize, 4},
              {z64 ? k32Max : cdOffset, 4}, {0, 2}});
    out_.write(end.data(), static_cast<std::streamsize>(end.size()));
  }

 private:
  /// Appends (value, byte width) fields little-endian.
  static void put(std::string& out, std::initializer_list<std::pair<uint64_t, int>> fields) {
    for (const auto& [value, width] : fields) putLE(out, value, static_cast<size_t>(width));
  }
  /// Fields shared by local and central headers, "version needed" through
  /// "extra length": flags 0, method stored, time 00:00, date 1980-01-01.
  static void putCommon(std::string& out, uint32_t crc, uint64_t size, bool z64, size_t nameLen,
                        size_t extraLen) {
    const uint64_t size32 = z64 ? k32Max : size;
    put(out, {{z64 ? 45 : 20, 2}, {0, 6}, {0x21, 2}, {crc, 4}, {size32, 4}, {size32, 4},
              {nameLen, 2}, {extraLen, 2}});
  }

  std::ofstream& out_;
  bool force64_;
  std::string central_;
  uint64_t offset_ = 0, count_ = 0;
};

}  // namespace

// ---------------------------------------------------------------- public

StatusOr<Tensor> decodeNpy(std::string_view bytes, const std::string& context) {
  Cursor c(bytes);
  if (c.take(kNpyMagic.size()) != kNpyMagic)
    return corrupt(context + ": not a .npy array (bad magic)");
  const uint8_t major = static_cast<uint8_t>(c.le(1)), minor = static_cast<uint8_t>(c.le(1));
  if (c.ok() && (major < 1 || major > 3)) {
    return unsupported(context + ": .npy format version " + std::to_string(major) + "." +
                       std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  std::string_view text = c.take(c.le(major == 1 ? 2 : 4));
  if (!c.ok()) return corrupt(context + ": truncated .npy header");
  NpyHeader h;
  std::string why = parseHeader(text, h);
  if (h.structured) return unsupported(context + ": structured (record) dtypes are not supported");
  if (!why.empty()) {
    return corrupt(context + ": malformed .npy header (" + why +
                   "): " + std::string(text.substr(0, 200)));
  }
  CAGR_ASSIGN_OR_RETURN(DType dtype, dtypeFromDescr(h.descr, context));
  std::optional<uint64_t> need = payloadBytes(h.shape, dtype);
  if (!need) return corrupt(context + ": shape " + shapeText(h.shape) + " is too large");
  if (*need != c.remaining()) {
    return corrupt(context + ": shape " + shapeText(h.shape) + " of '" + h.descr + "' needs " +
                   std::to_string(*need) + " data bytes but " + std::to_string(c.remaining()) +
                   " are present");
  }
  Tensor t(dtype, h.shape);
  if (*need > 0) std::memcpy(t.rawData(), bytes.data() + c.pos(), *need);
  if (dtype == DType::kBool) {
    for (uint8_t *p = t.data<uint8_t>(), *e = p + *need; p != e; ++p) *p = *p != 0;
  }
  return h.fortranOrder ? fortranToC(t) : t;
}

std::string encodeNpy(const Tensor& tensor) {
  Tensor t = storable(tensor);
  std::string out = npyHeader(t);
  out.append(reinterpret_cast<const char*>(t.rawData()), t.byteSize());
  return out;
}

StatusOr<Tensor> readNpy(const std::string& path) {
  CAGR_ASSIGN_OR_RETURN(InFile f, InFile::open(path));
  std::string bytes;
  CAGR_RETURN_IF_ERROR(f.readAt(0, f.size(), bytes, path, "file"));
  if (std::string_view(bytes).starts_with("PK\x03\x04")) {
    return invalidArgument(path + ": is an .npz (zip) archive, not a .npy file");
  }
  return decodeNpy(bytes, path);
}

StatusOr<NpzContents> readNpz(const std::string& path) {
  CAGR_ASSIGN_OR_RETURN(InFile f, InFile::open(path));
  CAGR_ASSIGN_OR_RETURN(CentralDir cd, findCentralDir(f, path));
  CAGR_ASSIGN_OR_RETURN(std::vector<ZipMember> members, readCentralDir(f, cd, path));
  NpzContents out;
  std::set<std::string> seen;
  for (const ZipMember& m : members) {
    if (m.name.ends_with('/')) continue;  // directory entry
    std::string key = m.name.ends_with(".npy") ? m.name.substr(0, m.name.size() - 4) : m.name;
    std::string ctx = path + ": array '" + key + "'";
    if (!seen.insert(key).second) return corrupt(ctx + ": appears twice in the archive");
    CAGR_ASSIGN_OR_RETURN(std::string bytes, readMember(f, m, ctx));
    CAGR_ASSIGN_OR_RETURN(Tensor t, decodeNpy(bytes, ctx));
    out.emplace_back(std::move(key), std::move(t));
  }
  return out;
}

Status writeNpz(const std::string& path, const NpzContents& arrays,
                const NpzWriteOptions& options) {
  std::set<std::string> seen;
  for (const auto& [key, tensor] : arrays) {
    if (key.empty()) return invalidArgument(path + ": array keys must be non-empty");
    if (!seen.insert(key).second)
      return invalidArgument(path + ": duplicate array key '" + key + "'");
  }
  return writeAtomically(path, [&](std::ofstream& out) {
    ZipWriter zip(out, options.forceZip64);
    for (const auto& [key, tensor] : arrays) {
      Tensor t = storable(tensor);
      zip.add(key + ".npy", npyHeader(t), t);
    }
    zip.finish();
  });
}

Status writeNpy(const std::string& path, const Tensor& tensor) {
  return writeAtomically(path, [&](std::ofstream& out) {
    Tensor t = storable(tensor);
    std::string head = npyHeader(t);
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    out.write(reinterpret_cast<const char*>(t.rawData()),
              static_cast<std::streamsize>(t.byteSize()));
  });
}

StatusOr<Tensor> findArray(const NpzContents& contents, const std::string& key,
                           const std::string& path) {
  std::string names;
  for (const auto& [name, tensor] : contents) {
    if (name == key) return tensor;
    names += (names.empty() ? "" : ", ") + name;
  }
  return notFound(path + ": no array named '" + key +
                  "' (has: " + (names.empty() ? "no arrays" : names) + ")");
}

}  // namespace cagr
