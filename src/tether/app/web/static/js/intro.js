// A new session's empty page: the agent's name, what it does, and example prompts to click.

import { json } from "./api.js";

const cache = new Map();

/** The agent's introduction (`GET /v1/agents/{id}/intro`), fetched once per agent. */
export function fetchIntro(agentId) {
  if (!cache.has(agentId)) {
    const load = json("GET", `/v1/agents/${encodeURIComponent(agentId)}/intro`);
    cache.set(agentId, load);
    load.catch(() => cache.delete(agentId));
  }
  return cache.get(agentId);
}

/** The empty-state block; `onPick(text)` runs when an example is clicked. */
export function introElement(intro, onPick) {
  const box = document.createElement("section");
  box.className = "intro";
  box.setAttribute("aria-label", "About this agent");
  const name = document.createElement("h2");
  name.textContent = intro.name;
  box.append(name);
  if (intro.description) {
    const about = document.createElement("p");
    about.textContent = intro.description;
    box.append(about);
  }
  if (intro.examples.length) {
    const hint = document.createElement("p");
    hint.className = "caption";
    hint.textContent = "Try one of these, or write your own below:";
    const list = document.createElement("div");
    list.className = "examples";
    for (const text of intro.examples) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "example";
      button.textContent = text;
      button.onclick = () => onPick(text);
      list.append(button);
    }
    box.append(hint, list);
  } else {
    const hint = document.createElement("p");
    hint.className = "caption";
    hint.textContent = "Write a message below to start.";
    box.append(hint);
  }
  return box;
}
