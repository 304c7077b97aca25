//===- TensorFiles.cpp - tensors in .npy and TensorProto files ----------===//
//
// What kiln-run (--input, --expected) and kiln-compile (--calibration-data)
// read and kiln-run (--output) writes: numpy .npy files (format 1.0-3.0,
// C order) and ONNX TensorProto .pb files, as in ONNX's test_data_set_N
// folders.
//
//===----------------------------------------------------------------------===//

#include "TensorFiles.h"

#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using kiln::rt::DType;

namespace kiln::files {

bool readFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

/// The bits of a sub-byte integer type ((u)int4, (u)int2), else 0.
static int subByteBits(DType dtype) {
  switch (dtype) {
  case DType::UInt4:
  case DType::Int4:
  case DType::Float4E2M1:
    return 4;
  case DType::UInt2:
  case DType::Int2:
    return 2;
  default:
    return 0;
  }
}

static bool loadTensorProto(const onnx::TensorProto &p, Loaded &t,
                            std::string &error) {
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "external data is not supported in tensor files";
    return false;
  }
  t.dtype = static_cast<DType>(p.data_type());
  size_t esize = kiln::rt::dtypeSize(t.dtype);
  if (!esize) {
    error = "unsupported data type " + std::to_string(p.data_type());
    return false;
  }
  // Dims that are negative or whose product passes the runtime's 1 TiB
  // limit are a damaged file (or another message read as a TensorProto),
  // not an allocation to try.
  size_t n = 1;
  for (int64_t d : p.dims()) {
    if (d < 0 || (d > 0 && n > (size_t(1) << 40) / esize / d)) {
      error = "the tensor has an invalid shape";
      return false;
    }
    t.shape.push_back(d);
    n *= d;
  }
  // (u)int4 and (u)int2 come packed, two or four to a byte, the first in
  // the low bits (raw data, or int32_data holding one packed byte each);
  // in memory each takes a byte.
  if (int bits = subByteBits(t.dtype)) {
    std::string packed;
    if (p.has_raw_data())
      packed = p.raw_data();
    else
      for (int32_t v : p.int32_data())
        packed += static_cast<char>(v);
    size_t perByte = 8 / bits;
    if (packed.size() != (n + perByte - 1) / perByte) {
      error = "the tensor holds " + std::to_string(packed.size()) +
              " packed bytes, its shape needs " +
              std::to_string((n + perByte - 1) / perByte);
      return false;
    }
    bool isSigned = t.dtype == DType::Int4 || t.dtype == DType::Int2;
    t.bytes.resize(n);
    for (size_t i = 0; i < n; ++i) {
      unsigned byte = static_cast<unsigned char>(packed[i / perByte]);
      int v = (byte >> (bits * (i % perByte))) & ((1 << bits) - 1);
      if (isSigned && (v >> (bits - 1)))
        v -= 1 << bits;
      t.bytes[i] = static_cast<char>(v);
    }
    return true;
  }
  if (p.has_raw_data()) {
    t.bytes = p.raw_data();
  } else {
    auto sizes = {p.float_data_size(), p.double_data_size(),
                  p.int64_data_size(), p.uint64_data_size(),
                  p.int32_data_size()};
    if (n != 0 && std::find(sizes.begin(), sizes.end(),
                            static_cast<int64_t>(n)) == sizes.end()) {
      error = "the tensor holds no data of its type";
      return false;
    }
    t.bytes.resize(n * esize);
    auto put = [&](size_t i, uint64_t v) {
      std::memcpy(&t.bytes[i * esize], &v, esize);
    };
    if (p.float_data_size() == (int)n)
      std::memcpy(t.bytes.data(), p.float_data().data(), n * 4);
    else if (p.double_data_size() == (int)n)
      std::memcpy(t.bytes.data(), p.double_data().data(), n * 8);
    else if (p.int64_data_size() == (int)n)
      for (size_t i = 0; i < n; ++i)
        put(i, p.int64_data(i));
    else if (p.uint64_data_size() == (int)n)
      for (size_t i = 0; i < n; ++i)
        put(i, p.uint64_data(i));
    else if (p.int32_data_size() == (int)n)
      for (size_t i = 0; i < n; ++i)
        put(i, static_cast<uint32_t>(p.int32_data(i)));
    else if (n != 0) {
      error = "the tensor holds no data of its type";
      return false;
    }
  }
  if (t.bytes.size() != n * esize) {
    error = "the tensor holds " + std::to_string(t.bytes.size()) +
            " bytes, its shape needs " + std::to_string(n * esize);
    return false;
  }
  return true;
}

static bool loadPb(const std::string &data, Loaded &t, std::string &error) {
  onnx::TensorProto p;
  if (!p.ParseFromString(data)) {
    error = "not a TensorProto";
    return false;
  }
  return loadTensorProto(p, t, error);
}

/// The tensors of a SequenceProto (or an OptionalProto's sequence) read
/// from `path`, appended to `elements`.
static bool loadElements(const onnx::SequenceProto &seq,
                         const std::string &path, std::vector<Loaded> &elements,
                         std::string &error) {
  for (const auto &t : seq.tensor_values())
    if (!loadTensorProto(t, elements.emplace_back(), error)) {
      error = "'" + path + "': element " + std::to_string(elements.size() - 1) +
              ": " + error;
      return false;
    }
  return true;
}

const std::pair<const char *, DType> kNpyTypes[12] = {
    {"<f4", DType::Float},  {"<f8", DType::Double},  {"<i8", DType::Int64},
    {"<i4", DType::Int32},  {"|i1", DType::Int8},    {"|u1", DType::UInt8},
    {"|b1", DType::Bool},   {"<f2", DType::Float16}, {"<i2", DType::Int16},
    {"<u2", DType::UInt16}, {"<u4", DType::UInt32},  {"<u8", DType::UInt64}};

static bool loadNpy(const std::string &data, Loaded &t, std::string &error) {
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) {
    error = "not a .npy file";
    return false;
  }
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLen, start;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(data[8]) |
                (static_cast<unsigned char>(data[9]) << 8);
    start = 10;
  } else {
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i]))
                   << (8 * i);
    start = 12;
  }
  std::string header = data.substr(start, headerLen);
  auto field = [&](const std::string &key) {
    size_t p = header.find("'" + key + "'");
    return p == std::string::npos ? std::string()
                                  : header.substr(header.find(':', p) + 1);
  };
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  bool known = false;
  for (auto &k : kNpyTypes)
    if (descr == k.first) {
      t.dtype = k.second;
      known = true;
    }
  if (!known) {
    error = "unsupported .npy dtype '" + descr + "'";
    return false;
  }
  if (field("fortran_order").find("True") == 0 ||
      field("fortran_order").find(" True") == 0) {
    error = "Fortran-ordered arrays are not supported";
    return false;
  }
  std::string shape = field("shape");
  shape = shape.substr(shape.find('(') + 1);
  shape = shape.substr(0, shape.find(')'));
  std::stringstream ss(shape);
  std::string item;
  size_t n = 1;
  while (std::getline(ss, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos) {
      t.shape.push_back(std::stoll(item));
      n *= t.shape.back();
    }
  t.bytes = data.substr(start + headerLen);
  if (t.bytes.size() != n * kiln::rt::dtypeSize(t.dtype)) {
    error = "the array's data does not match its shape";
    return false;
  }
  return true;
}

static bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

bool loadTensor(const std::string &path, Loaded &t, std::string &error) {
  std::string data;
  if (!readFile(path, data)) {
    error = "cannot read '" + path + "'";
    return false;
  }
  bool ok =
      endsWith(path, ".npy") ? loadNpy(data, t, error) : loadPb(data, t, error);
  if (!ok)
    error = "'" + path + "': " + error;
  return ok;
}

bool loadSequence(const std::string &path, std::vector<Loaded> &elements,
                  std::string &error) {
  std::string data;
  if (!readFile(path, data)) {
    error = "cannot read '" + path + "'";
    return false;
  }
  onnx::SequenceProto seq;
  if (!seq.ParseFromString(data) ||
      (seq.elem_type() != onnx::SequenceProto::TENSOR &&
       !(seq.elem_type() == onnx::SequenceProto::UNDEFINED &&
         seq.tensor_values_size() == 0))) {
    error = "'" + path + "': not a SequenceProto of tensors";
    return false;
  }
  elements.clear();
  return loadElements(seq, path, elements, error);
}

bool loadOptional(const std::string &path, bool &present, bool &isSequence,
                  std::vector<Loaded> &elements, std::string &error) {
  std::string data;
  if (!readFile(path, data)) {
    error = "cannot read '" + path + "'";
    return false;
  }
  onnx::OptionalProto opt;
  if (!opt.ParseFromString(data)) {
    error = "'" + path + "': not an OptionalProto";
    return false;
  }
  elements.clear();
  present = opt.has_tensor_value() || opt.has_sequence_value();
  isSequence = opt.has_sequence_value();
  if (opt.has_tensor_value()) {
    if (!loadTensorProto(opt.tensor_value(), elements.emplace_back(), error)) {
      error = "'" + path + "': " + error;
      return false;
    }
  } else if (opt.has_sequence_value()) {
    if (!loadElements(opt.sequence_value(), path, elements, error))
      return false;
  } else if (opt.elem_type() != onnx::OptionalProto::UNDEFINED &&
             opt.elem_type() != onnx::OptionalProto::TENSOR &&
             opt.elem_type() != onnx::OptionalProto::SEQUENCE) {
    error = "'" + path + "': an optional of neither a tensor nor a sequence";
    return false;
  }
  return true;
}

bool isTensorFileName(const std::string &path) {
  return endsWith(path, ".npy") || endsWith(path, ".pb");
}

static bool npyBytes(DType dtype, const std::vector<int64_t> &shape,
                     const void *data, size_t bytes, std::string &out,
                     std::string &error) {
  // numpy has neither bfloat16 nor float8: their bits, as unsigned; nor
  // 4- or 2-bit integers: one per byte.
  if (dtype == DType::BFloat16)
    dtype = DType::UInt16;
  if (dtype == DType::Int4 || dtype == DType::Int2)
    dtype = DType::Int8;
  else if (kiln::rt::dtypeSize(dtype) == 1 && dtype >= DType::Float8E4M3FN)
    dtype = DType::UInt8;
  const char *descr = nullptr;
  for (auto &k : kNpyTypes)
    if (k.second == dtype)
      descr = k.first;
  if (!descr) {
    error = std::string("no .npy type for ") + kiln::rt::dtypeName(dtype);
    return false;
  }
  std::string dims = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    dims += std::to_string(shape[i]) + (shape.size() == 1 ? "," : "") +
            (i + 1 < shape.size() ? ", " : "");
  dims += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + dims + ", }";
  // Magic, version, header length; the header padded with spaces and a
  // newline so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char *>(data), bytes);
  return true;
}

static bool pbBytes(const std::string &name, DType dtype,
                    const std::vector<int64_t> &shape, const void *data,
                    size_t bytes, std::string &out, std::string &error) {
  if (!kiln::rt::dtypeSize(dtype)) {
    error =
        std::string("no TensorProto type for ") + kiln::rt::dtypeName(dtype);
    return false;
  }
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : shape)
    p.add_dims(d);
  if (int bits = subByteBits(dtype)) {
    // Packed, as ONNX files hold them.
    size_t perByte = 8 / bits;
    std::string packed((bytes + perByte - 1) / perByte, '\0');
    const auto *in = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < bytes; ++i)
      packed[i / perByte] = static_cast<char>(
          static_cast<unsigned char>(packed[i / perByte]) |
          (in[i] & ((1u << bits) - 1)) << (bits * (i % perByte)));
    p.set_raw_data(packed);
  } else {
    p.set_raw_data(data, bytes);
  }
  if (!p.SerializeToString(&out)) {
    error = "the tensor does not fit a TensorProto";
    return false;
  }
  return true;
}

bool saveTensor(const std::string &path, const std::string &name, DType dtype,
                const std::vector<int64_t> &shape, const void *data,
                size_t bytes, std::string &error) {
  // (u)int4 and (u)int2: each byte's value from its low bits (sign-extended
  // for the signed types; the code leaves the high bits unspecified).
  std::string values;
  if (subByteBits(dtype)) {
    const auto *in = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < bytes; ++i)
      values += static_cast<char>(kiln::rt::subByteValue(in[i], dtype));
    data = values.data();
  }
  std::string out;
  bool ok = endsWith(path, ".npy")
                ? npyBytes(dtype, shape, data, bytes, out, error)
                : pbBytes(name, dtype, shape, data, bytes, out, error);
  if (!ok) {
    error = "'" + path + "': " + error;
    return false;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !f.write(out.data(), out.size()) || !f.flush()) {
      std::remove(tmp.c_str());
      error = "cannot write '" + path + "'";
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

} // namespace kiln::files
