// MathJax reads the \( ... \) and \[ ... \] spans that pymdownx.arithmatex (generic mode)
// writes, and nothing else on the page.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};
