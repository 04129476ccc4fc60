// app.js: a script long enough that its compressed siblings are smaller than it is.
document.addEventListener("DOMContentLoaded", () => {
  const h1 = document.querySelector("h1");
  h1.textContent = h1.textContent + " (with JavaScript)";
  console.log("dwell: app.js loaded; app.js loaded; app.js loaded; app.js loaded");
});
