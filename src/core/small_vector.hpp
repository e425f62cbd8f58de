#pragma once
// SmallVector<T, N>: a vector of trivially copyable values that keeps its first N elements inline and only
// allocates past them. An op graph holds one dependency list per op and one link path per flow, nearly all of a
// handful of entries; as std::vectors they made the estimate's probe graphs spend more time in malloc than in the
// engine (estimate/README.md, "Speed").
//
// The subset of std::vector's interface the op graph, the workload builder and the engine use: construction from
// a braced list, a std::vector or an iterator range, push_back, assign, clear, size,
// indexing, iteration. Elements must be trivially copyable (ids, link numbers), so growth and copies are memcpy.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace moesim {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable values only");
  static_assert(N > 0);
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "the heap part comes from plain operator new");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  template <std::forward_iterator It>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  // From a std::vector, implicitly, so lists built as vectors pass where a SmallVector is taken.
  template <class Alloc>
  SmallVector(const std::vector<T, Alloc>& values) {  // NOLINT(google-explicit-constructor)
    assign(values.begin(), values.end());
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  // From another container (not from this one's own elements).
  template <std::forward_iterator It>
  void assign(It first, It last) {
    size_ = 0;
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    reserve(n);
    std::copy(first, last, data());
    size_ = static_cast<std::uint32_t>(n);
  }
  void push_back(const T& v) {
    const T copy = v;  // `v` may be an element of this vector, which grow() frees
    if (size_ == capacity_) grow(2 * static_cast<std::size_t>(capacity_));
    data()[size_++] = copy;
  }
  void reserve(std::size_t n) {
    if (n > capacity_) grow(std::max(n, 2 * static_cast<std::size_t>(capacity_)));
  }
  void clear() { size_ = 0; }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return heap_ ? heap_ : inline_values(); }
  const T* data() const { return heap_ ? heap_ : inline_values(); }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  template <class Alloc>
  friend bool operator==(const SmallVector& a, const std::vector<T, Alloc>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  T* inline_values() { return std::launder(reinterpret_cast<T*>(inline_)); }
  const T* inline_values() const { return std::launder(reinterpret_cast<const T*>(inline_)); }
  void grow(std::size_t capacity) {
    if (capacity > std::numeric_limits<std::uint32_t>::max()) throw std::length_error("SmallVector: too many elements");
    T* bigger = static_cast<T*>(::operator new(capacity * sizeof(T)));
    if (size_ > 0) std::memcpy(static_cast<void*>(bigger), static_cast<const void*>(data()), size_ * sizeof(T));
    if (heap_) ::operator delete(heap_);
    heap_ = bigger;
    capacity_ = static_cast<std::uint32_t>(capacity);
  }
  void release() {
    if (heap_) ::operator delete(heap_);
    heap_ = nullptr;
    size_ = 0;
    capacity_ = N;
  }
  void take(SmallVector& o) {
    if (o.heap_) {
      heap_ = o.heap_;
      capacity_ = o.capacity_;
      o.heap_ = nullptr;
      o.capacity_ = N;
    } else if (o.size_ > 0) {
      std::memcpy(static_cast<void*>(inline_values()), static_cast<const void*>(o.inline_values()),
                  o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T* heap_ = nullptr;  // null while the elements fit inline
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;
  alignas(T) unsigned char inline_[N * sizeof(T)];
};

}  // namespace moesim
