// Narrow screens stack the editors above the output, so the output would sit below the
// whole editor. A switch (shown by playground.css only where the columns stack) shows
// one pane at a time: "Edit" or "Output". Wide screens show both and ignore the choice.
"use strict";

(function () {
  const columns = document.querySelector(".columns");
  const buttons = Array.from(document.querySelectorAll(".pane-switch [data-pane]"));
  if (!columns || !buttons.length) return;

  function showPane(name) {
    columns.dataset.pane = name;
    buttons.forEach((button) => button.setAttribute("aria-pressed", String(button.dataset.pane === name)));
    // Start the pane at its top when the page was scrolled down into the other one.
    if (window.scrollY > columns.offsetTop) window.scrollTo(0, columns.offsetTop);
  }

  buttons.forEach((button) => button.addEventListener("click", () => showPane(button.dataset.pane)));
  // A share link opens on the view it was made on: its pane first (the server says so).
  showPane(columns.dataset.firstPane || "inputs");

  // The skip link: the Output pane (where panes stack), focus on the open view's tab.
  const skip = document.querySelector(".skip-link");
  if (skip) {
    skip.addEventListener("click", (event) => {
      event.preventDefault();
      showPane("outputs");
      const tab = document.querySelector('.tab[aria-selected="true"]');
      if (tab) {
        tab.scrollIntoView({ block: "nearest" });
        tab.focus();
      }
    });
  }
})();
