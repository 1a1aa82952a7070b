#pragma once
// Policy models selected by name. Each model kind (sizing, admission, ...) is
// an interface with `static constexpr const char* kModel`. A file of variants
// defines `void register_<file>_policies(PolicyRegistry&)` that adds them, and
// is listed once in VRAMSIM_POLICY_FILES (models/builtin_policies.cpp): a new
// variant is one new file plus that one line.
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace vramsim {

class UnknownPolicyError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class PolicyRegistry {
 public:
  using Factory = std::function<std::shared_ptr<const void>()>;
  static PolicyRegistry& instance();

  template <class Interface, class Impl>
  void add(const std::string& variant) {
    add_factory(Interface::kModel, variant, [] {
      return std::static_pointer_cast<const void>(std::make_shared<const Impl>());
    });
  }
  template <class Interface>
  std::shared_ptr<const Interface> make(const std::string& variant) const {
    return std::static_pointer_cast<const Interface>(make_any(Interface::kModel, variant));
  }
  bool has(const std::string& model, const std::string& variant) const;
  std::vector<std::string> models() const;
  std::vector<std::string> variants(const std::string& model) const;

 private:
  void add_factory(const std::string& model, const std::string& variant, Factory f);
  std::shared_ptr<const void> make_any(const std::string& model, const std::string& variant) const;
  std::map<std::string, std::map<std::string, Factory>> factories_;
};

}  // namespace vramsim
