// The Flamenco job type (farm/flamenco/cloth_untangle_bake.js) compiled under Node with a stub
// of the Manager's author API that records tasks, commands and dependencies (no Flamenco
// server is packaged). Guards: the settings are well-formed Flamenco settings; one bake task
// per object group and an attach task after all of them; bad settings are refused; and every
// command's arguments after "--" are accepted by farm.py's own parser with the meaning the job
// intended (checked by running that parser in Python).
//
// Run: node test_flamenco_job.js JOB_TYPE_FILE FARM_PY PYTHON
"use strict";

const assert = require("assert");
const childProcess = require("child_process");
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [jobTypeFile, farmScript, python] = process.argv.slice(2);
if (!jobTypeFile || !farmScript || !python) {
  console.error("usage: node test_flamenco_job.js JOB_TYPE_FILE FARM_PY PYTHON");
  process.exit(2);
}

// The author API as the Manager's JavaScript engine gives it, recording what is authored.
const author = {
  Task(name, type) {
    return {
      name,
      type,
      commands: [],
      dependencies: [],
      addCommand(command) {
        this.commands.push(command);
      },
      addDependency(task) {
        this.dependencies.push(task);
      },
    };
  },
  Command(type, parameters) {
    return { type, parameters };
  },
};

function load() {
  const source = fs.readFileSync(jobTypeFile, "utf8");
  const context = vm.createContext({ author, print: () => {}, path: path.posix });
  return vm.runInContext(`${source}\n;({ JOB_TYPE, compileJob });`, context, { filename: jobTypeFile });
}

const { JOB_TYPE, compileJob } = load();

// Arrays made inside the job type's context have that context's Array prototype.
function plain(value) {
  return JSON.parse(JSON.stringify(value));
}

function settingsWith(overrides) {
  const settings = {};
  for (const setting of JOB_TYPE.settings) {
    if (setting.default !== undefined) settings[setting.key] = setting.default;
  }
  return Object.assign(
    settings,
    {
      blendfile: "/shots/sh010/sh010.blend",
      objects: "Shirt, Skirt;Cape",
      frames: "1-48",
      output_blendfile: "/shots/sh010/sh010_untangled.blend",
      addon_script: "/farm/addons/cloth_untangle/farm.py",
    },
    overrides
  );
}

function compile(overrides) {
  const job = {
    settings: settingsWith(overrides),
    tasks: [],
    addTask(task) {
      this.tasks.push(task);
    },
  };
  compileJob(job);
  return job;
}

const tests = [];
function test(name, body) {
  tests.push({ name, body });
}

test("settings are well-formed Flamenco settings", () => {
  const types = new Set(["string", "int32", "float", "bool"]);
  const keys = new Set();
  for (const setting of JOB_TYPE.settings) {
    assert.ok(/^[a-z_]+$/.test(setting.key), `key ${setting.key}`);
    assert.ok(!keys.has(setting.key), `key ${setting.key} repeats`);
    keys.add(setting.key);
    assert.ok(types.has(setting.type), `${setting.key}: type ${setting.type}`);
    if (setting.default !== undefined) {
      const expected = setting.type === "bool" ? "boolean" : setting.type === "string" ? "string" : "number";
      assert.strictEqual(typeof setting.default, expected, `${setting.key}: default's type`);
    }
  }
  for (const key of ["objects", "frames", "cache_folder", "addon_script", "blendfile"]) {
    assert.ok(keys.has(key), `missing setting ${key}`);
  }
  assert.strictEqual(typeof JOB_TYPE.label, "string");
});

test("one bake task per group, the attach task after all of them", () => {
  const job = compile({});
  assert.deepStrictEqual(
    job.tasks.map((task) => task.name),
    ["bake-Shirt+Skirt", "bake-Cape", "attach-caches"]
  );
  const [shirt, cape, attach] = job.tasks;
  assert.deepStrictEqual(shirt.dependencies, []);
  assert.deepStrictEqual(cape.dependencies, []);
  assert.deepStrictEqual(attach.dependencies, [shirt, cape]);
  for (const task of job.tasks) {
    assert.strictEqual(task.type, "blender");
    assert.strictEqual(task.commands.length, 1);
    const command = task.commands[0];
    assert.strictEqual(command.type, "blender-render");
    assert.strictEqual(command.parameters.exe, "{blender}");
    assert.strictEqual(command.parameters.blendfile, "/shots/sh010/sh010.blend");
    assert.deepStrictEqual(plain(command.parameters.args.slice(0, 3)), [
      "--python",
      "/farm/addons/cloth_untangle/farm.py",
      "--",
    ]);
  }
});

test("without attach only the bakes are authored", () => {
  const job = compile({ attach: false, objects: "Shirt" });
  assert.deepStrictEqual(job.tasks.map((task) => task.name), ["bake-Shirt"]);
});

test("bad settings are refused with a message", () => {
  const refused = {
    "no objects": { objects: " ; , " },
    "an object in two groups": { objects: "Shirt;Shirt,Cape" },
    "an empty frame range": { frames: "48-1" },
    "frames that are not a range": { frames: "all" },
    "no cache folder": { cache_folder: "" },
    "attach without an output file": { output_blendfile: "" },
  };
  for (const [what, overrides] of Object.entries(refused)) {
    let message = null;
    try {
      compile(overrides);
    } catch (error) {
      message = String(error);
    }
    assert.ok(message, `${what} was accepted`);
  }
});

test("farm.py's parser reads every command as the job meant it", () => {
  const job = compile({ cache_folder: "//cache dir" });
  const commands = job.tasks.map((task) => {
    const args = task.commands[0].parameters.args;
    return args.slice(args.indexOf("--") + 1);
  });
  const script = [
    "import importlib.util, json, sys",
    "spec = importlib.util.spec_from_file_location('farm', sys.argv[1])",
    "farm = importlib.util.module_from_spec(spec); spec.loader.exec_module(farm)",
    "assert 'bpy' not in sys.modules",
    "out = []",
    "for argv in json.load(sys.stdin):",
    "    out.append(vars(farm.parse(argv)))",
    "json.dump(out, sys.stdout)",
  ].join("\n");
  const run = childProcess.spawnSync(python, ["-c", script, farmScript], {
    input: JSON.stringify(commands),
    encoding: "utf8",
  });
  assert.strictEqual(run.status, 0, run.stderr);
  const parsed = JSON.parse(run.stdout);
  assert.deepStrictEqual(parsed, [
    { command: "bake", objects: ["Shirt", "Skirt"], frames: [1, 48], folder: "//cache dir" },
    { command: "bake", objects: ["Cape"], frames: [1, 48], folder: "//cache dir" },
    {
      command: "attach",
      objects: [["Shirt", "Skirt"], ["Cape"]],
      folder: "//cache dir",
      output: "/shots/sh010/sh010_untangled.blend",
    },
  ]);
});

let failed = 0;
for (const { name, body } of tests) {
  try {
    body();
    console.log(`[       OK ] ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`[  FAILED  ] ${name}\n${error.stack || error}`);
  }
}
console.log(`${tests.length - failed} of ${tests.length} tests passed`);
process.exit(failed ? 1 : 0);
