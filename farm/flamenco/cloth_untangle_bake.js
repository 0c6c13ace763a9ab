// SPDX-License-Identifier: MIT
// Flamenco job type "Cloth Untangle Bake": bakes untangled PC2 caches of a saved .blend on the
// farm with the cloth_untangle add-on's headless entry point (farm.py). Put this file in the
// Flamenco Manager's scripts/ folder and restart the Manager.
//
// One task per object group, not per frame chunk: a bake is sequential in frames (each frame's
// untangling starts from the previous frame's corrected state), so a chunk could only start
// from the uncorrected input and would jump where two chunks meet. Objects in one group are
// untangled together (their crossings of each other are solved too); objects that can touch
// must share a group. Groups are independent, so they run on as many workers as there are.
// A last task adds the Mesh Cache modifiers and saves a copy of the file, once every bake is
// done (the bakes never save the .blend, so they cannot overwrite each other's work).

const JOB_TYPE = {
  label: "Cloth Untangle Bake",
  description: "Bake intersection-free cloth caches, one task per object group",
  settings: [
    {
      key: "objects",
      type: "string",
      required: true,
      eval: "','.join(o.name for o in C.selected_objects if o.type == 'MESH')",
      evalInfo: { showLinkButton: true, description: "The selected mesh objects" },
      description:
        "Object groups separated by ';', names within a group by ','. Each group is one " +
        "task; objects that can touch each other belong in one group",
    },
    {
      key: "frames",
      type: "string",
      required: true,
      eval: "f'{C.scene.frame_start}-{C.scene.frame_end}'",
      evalInfo: { showLinkButton: true, description: "Scene frame range" },
      description: "Frame range to bake, FIRST-LAST",
    },
    {
      key: "cache_folder",
      type: "string",
      subtype: "dir_path",
      required: true,
      default: "//untangled_cache",
      description: "Where the PC2 files go, as the workers see it (// = beside the .blend)",
    },
    {
      key: "attach",
      type: "bool",
      default: true,
      description: "After the bakes, save a copy of the file that plays the caches",
    },
    {
      key: "output_blendfile",
      type: "string",
      subtype: "file_path",
      eval: "bpy.path.abspath('//') + bpy.path.display_name_from_filepath(bpy.data.filepath) + '_untangled.blend'",
      description: "The copy saved by the attach task",
    },
    {
      key: "addon_script",
      type: "string",
      subtype: "file_path",
      required: true,
      default: "{cloth_untangle}/farm.py",
      description:
        "farm.py of the cloth_untangle add-on as the workers see it (define the variable " +
        "cloth_untangle in flamenco-manager.yaml, or give the path)",
    },
    // Filled in by the Flamenco add-on on submission.
    { key: "blendfile", type: "string", required: true, visible: "web", description: "Path of the Blender file" },
  ],
};

function compileJob(job) {
  const settings = job.settings;
  const groups = objectGroups(settings.objects);
  checkFrames(settings.frames);
  if (!settings.cache_folder) {
    throw "cache_folder is empty";
  }
  if (settings.attach && !settings.output_blendfile) {
    throw "output_blendfile is empty: the attach task needs a file to save";
  }

  const bakes = [];
  for (const group of groups) {
    const task = author.Task(`bake-${group.join("+")}`, "blender");
    task.addCommand(
      blenderCommand(settings, [
        "bake",
        "--objects", group.join(","),
        "--frames", settings.frames.trim(),
        "--folder", settings.cache_folder,
      ])
    );
    job.addTask(task);
    bakes.push(task);
  }

  if (settings.attach) {
    const args = ["attach"];
    for (const group of groups) {
      args.push("--objects", group.join(","));
    }
    args.push("--folder", settings.cache_folder, "--output", settings.output_blendfile);
    const task = author.Task("attach-caches", "blender");
    task.addCommand(blenderCommand(settings, args));
    for (const bake of bakes) {
      task.addDependency(bake);
    }
    job.addTask(task);
  }
}

function blenderCommand(settings, farmArgs) {
  return author.Command("blender-render", {
    exe: "{blender}",
    exeArgs: "{blenderArgs}",
    argsBefore: [],
    blendfile: settings.blendfile,
    args: ["--python", settings.addon_script, "--"].concat(farmArgs),
  });
}

// "A,B;C" -> [["A", "B"], ["C"]]; a name in two groups would be baked twice, differently.
function objectGroups(text) {
  const groups = String(text || "")
    .split(";")
    .map((group) => group.split(",").map((name) => name.trim()).filter((name) => name))
    .filter((group) => group.length > 0);
  if (groups.length === 0) {
    throw "no objects to bake: give object names, groups separated by ';'";
  }
  const seen = new Set();
  for (const group of groups) {
    for (const name of group) {
      if (seen.has(name)) {
        throw `object '${name}' is named twice; each object belongs to one group`;
      }
      seen.add(name);
    }
  }
  return groups;
}

function checkFrames(text) {
  const match = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(String(text || ""));
  if (!match || parseInt(match[2], 10) < parseInt(match[1], 10)) {
    throw `frames must be FIRST-LAST with FIRST <= LAST, got '${text}'`;
  }
}
