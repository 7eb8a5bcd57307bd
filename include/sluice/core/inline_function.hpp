// A move-only callable, called once, held in place when it fits `Bytes` (else on the heap): the
// Redis store's callbacks and what they resume, which a decision would otherwise allocate.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace sluice::core {

template <class Signature, std::size_t Bytes>
class InlineFunction;

template <class... Args, std::size_t Bytes>
class InlineFunction<void(Args...), Bytes> {
 public:
  InlineFunction() = default;
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, InlineFunction>>>
  InlineFunction(F&& f) {  // NOLINT(google-explicit-constructor): any callable, as std::function
    using H = std::decay_t<F>;
    if constexpr (kFits<H>) {
      new (buf_) H(std::forward<F>(f));
      ops_ = &kInPlace<H>;
    } else {
      new (buf_) H*(new H(std::forward<F>(f)));
      ops_ = &kOnHeap<H>;
    }
  }
  InlineFunction(InlineFunction&& other) noexcept { take(other); }
  InlineFunction& operator=(InlineFunction&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  InlineFunction(const InlineFunction&) = delete;
  InlineFunction& operator=(const InlineFunction&) = delete;
  ~InlineFunction() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()(Args... args) { ops_->call(buf_, std::forward<Args>(args)...); }
  void reset() {
    if (ops_ != nullptr) ops_->destroy(buf_);
    ops_ = nullptr;
  }

 private:
  struct Ops {
    void (*call)(void*, Args&&...);
    void (*move)(void* from, void* to);  // into raw storage; `from` is left destroyed
    void (*destroy)(void*);
  };
  template <class H>
  static constexpr bool kFits =
      sizeof(H) <= Bytes &&
      alignof(H) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<H>;
  template <class H>
  static H& at(void* p) {
    return *std::launder(static_cast<H*>(p));
  }
  template <class H>
  static constexpr Ops kInPlace{
      [](void* p, Args&&... a) { std::move(at<H>(p))(std::forward<Args>(a)...); },
      [](void* from, void* to) {
        new (to) H(std::move(at<H>(from)));
        at<H>(from).~H();
      },
      [](void* p) { at<H>(p).~H(); }};
  template <class H>
  static constexpr Ops kOnHeap{
      [](void* p, Args&&... a) { std::move (*at<H*>(p))(std::forward<Args>(a)...); },
      [](void* from, void* to) { new (to) H*(at<H*>(from)); }, [](void* p) { delete at<H*>(p); }};

  void take(InlineFunction& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->move(other.buf_, buf_);
    ops_ = other.ops_;
    other.ops_ = nullptr;
  }

  alignas(std::max_align_t) unsigned char buf_[Bytes];
  const Ops* ops_ = nullptr;
};

}  // namespace sluice::core
