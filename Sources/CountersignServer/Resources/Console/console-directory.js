// The console's directory form: choosing a kind fills in that kind's usual filters and
// attributes, where a field is empty or still holds the previous kind's value (a value typed
// by the administrator is kept). Without script, an empty field takes the kind's default.
(function () {
  "use strict";
  var kind = document.getElementById("kind");
  if (!kind) { return; }
  var previous = kind.value;
  kind.addEventListener("change", function () {
    var fields = document.querySelectorAll("#directory-form [data-default-" + kind.value + "]");
    for (var i = 0; i < fields.length; i++) {
      var field = fields[i];
      var old = field.getAttribute("data-default-" + previous);
      if (field.value === "" || field.value === old) {
        field.value = field.getAttribute("data-default-" + kind.value);
      }
    }
    previous = kind.value;
  });
})();
