"""The toy task's page (tests/helpers/toy_task.py), built from the shared components alone."""

from components.task_page import task_page
from tests.helpers.toy_task import TASK, demo_files

task_page(TASK, demo=demo_files)
